/**
 * @module Redfish hardware RAID (Storage v1 / Volume v1: `StorageControllers[].SupportedRAIDTypes`,
 * volumes created by POST to `Storage/{id}/Volumes` with `RAIDType`, `CapacityBytes` and
 * `Links.Drives`, deleted by DELETE; 202 answers are followed as tasks). The out-of-band
 * inventory lives in inventory.ts. metal3 rules (docs/metal3-mapping.md: "RAID"): an equal target is a no-op;
 * otherwise every volume is deleted and the target created.
 */
import type { RaidControl, RaidController, RaidLevel, RaidVolume, RaidVolumeRequest } from '../capabilities.js';
import type { RedfishContext } from './context.js';
import { lastSegment, redfishProtocolError } from './json.js';
import { decodeStorage, decodeVolume, raidLevelOfType, raidTypeOfLevel, type StorageResource } from './resources.js';

/** Fewest physical disks a level needs (metal3 / Ironic RAID_LEVELS `min_disks`). */
export const MIN_DISKS: Readonly<Record<RaidLevel, number>> = { '0': 1, '1': 2, '5': 3, '6': 4, '1+0': 4, '5+0': 6, '6+0': 8 };

interface StorageView {
  readonly path: string;
  readonly storage: StorageResource;
}

/** True when `existing` already is what `requests` ask for (same count, each request matched once). */
export function raidTargetMatches(existing: readonly RaidVolume[], requests: readonly RaidVolumeRequest[]): boolean {
  if (existing.length !== requests.length) return false;
  const left = [...existing];
  for (const r of requests) {
    const i = left.findIndex((v) => v.level === r.level
      && (r.name === undefined || v.name === r.name)
      && (r.controller === undefined || v.controller === r.controller)
      && (r.sizeBytes === undefined || v.sizeBytes === r.sizeBytes)
      && (r.physicalDisks === undefined || [...r.physicalDisks].sort().join() === [...v.physicalDisks].sort().join())
      && (r.diskCount === undefined || r.diskCount === v.physicalDisks.length));
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

/** Builds the RAID capability. */
export function createRaidControl(ctx: RedfishContext): RaidControl {
  const storages = async (operation: string): Promise<StorageView[]> => {
    const uri = (await ctx.system()).value.links.storage;
    if (uri === undefined) throw ctx.unsupported('raid', operation, 'the System has no Storage collection');
    const out: StorageView[] = [];
    for (const path of await ctx.members(uri)) out.push({ path, storage: (await ctx.fetch(path, decodeStorage)).value });
    return out;
  };
  const read = async (operation: string): Promise<{ views: StorageView[]; controllers: RaidController[]; volumes: (RaidVolume & { uri: string })[] }> => {
    const views = await storages(operation);
    const controllers: RaidController[] = [];
    const volumes: (RaidVolume & { uri: string })[] = [];
    for (const { storage } of views) {
      const supportedLevels = storage.supportedRaidTypes.flatMap((t) => {
        const level = raidLevelOfType(t);
        return level === undefined ? [] : [level];
      });
      controllers.push({ id: storage.id, name: storage.name, drives: storage.drives.map(lastSegment), supportedLevels });
      if (storage.volumes === undefined) continue;
      for (const member of await ctx.members(storage.volumes)) {
        const { value: v } = await ctx.fetch(member, decodeVolume);
        if (v.level === undefined) continue; // not a RAID volume (e.g. a raw disk exposed as a volume)
        volumes.push({ uri: v.uri, id: v.id, name: v.name, level: v.level, sizeBytes: v.capacityBytes ?? 0, controller: storage.id, physicalDisks: v.drives.map(lastSegment) });
      }
    }
    return { views, controllers, volumes };
  };
  return {
    async getRaidConfig() {
      const { controllers, volumes } = await read('getRaidConfig');
      return { controllers, volumes: volumes.map(({ uri: _uri, ...v }) => v) };
    },
    async applyRaidConfig(requests) {
      const { views, volumes } = await read('applyRaidConfig');
      if (raidTargetMatches(volumes, requests)) return { rebootRequired: false, taskId: undefined };
      for (const v of volumes) {
        const res = await ctx.client.delete(v.uri, true);
        if (res !== undefined) await ctx.client.waitForTask(res);
      }
      const used = new Set<string>();
      let taskId: string | undefined;
      for (const [i, r] of requests.entries()) {
        if (taskId !== undefined) {
          await ctx.client.followTask(taskId);
          taskId = undefined;
        }
        const view = r.controller === undefined ? views.find((v) => v.storage.drives.length > 0) : views.find((v) => v.storage.id === r.controller);
        if (view?.storage.volumes === undefined) {
          throw redfishProtocolError(ctx.at(view?.path ?? '/redfish/v1'), `no storage controller ${r.controller ?? 'with drives'} that takes volumes`);
        }
        const type = raidTypeOfLevel(r.level);
        if (view.storage.supportedRaidTypes.length > 0 && !view.storage.supportedRaidTypes.includes(type)) {
          throw ctx.unsupported('raid', `applyRaidConfig(RAID ${r.level})`, `controller ${view.storage.id} supports ${view.storage.supportedRaidTypes.join(', ')}`);
        }
        const drives = r.physicalDisks === undefined
          ? view.storage.drives.filter((d) => !used.has(d)).slice(0, r.diskCount ?? MIN_DISKS[r.level])
          : r.physicalDisks.map((name) => {
            const found = view.storage.drives.find((d) => lastSegment(d) === name || d === name);
            if (found === undefined) throw redfishProtocolError(ctx.at(view.path), `unknown physical disk ${name}`);
            return found;
          });
        if (drives.length < MIN_DISKS[r.level]) {
          throw redfishProtocolError(ctx.at(view.path), `RAID ${r.level} needs ${MIN_DISKS[r.level]} disks; ${drives.length} available`);
        }
        for (const d of drives) used.add(d);
        const body: Record<string, unknown> = { RAIDType: type, Name: r.name ?? `volume-${i}`, Links: { Drives: drives.map((d) => ({ '@odata.id': d })) } };
        if (r.sizeBytes !== undefined && r.sizeBytes > 0) body.CapacityBytes = r.sizeBytes;
        const res = await ctx.client.post(view.storage.volumes, body);
        taskId = res.status === 202 ? ctx.client.taskPathOf(res) : undefined;
      }
      return { rebootRequired: false, taskId };
    },
  };
}
