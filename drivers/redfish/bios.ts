/**
 * @module Redfish BIOS settings and Secure Boot. BIOS: current values from `Bios.Attributes`,
 * the schema from the AttributeRegistry named by `Bios.AttributeRegistry` (found among
 * `/redfish/v1/Registries` members by id or `Registry`, English location preferred; without
 * one the schema is inferred with type ''), pending values from the `@Redfish.Settings`
 * settings object, changes PATCHed there with `@Redfish.SettingsApplyTime: OnReset` when the
 * BMC lists it (DSP0266 §9.8), then handed to the vendor hook (iDRAC job queue).
 * Secure Boot: PATCH `SecureBoot.SecureBootEnable`.
 */
import type { BiosAttributeSchema, BiosSettingsControl, SecureBootControl } from '../capabilities.js';
import { inferBiosSchema, pendingBiosValues, planBiosChanges } from './bios-settings.js';
import type { RedfishContext } from './context.js';
import { decodeCollection, lastSegment, redfishProtocolError } from './json.js';
import {
  biosValueToString, decodeAttributeRegistry, decodeBios, decodeRegistryFile, decodeSecureBoot,
  type BiosResource, type BiosValue,
} from './resources.js';

const MAX_REGISTRY_FILES = 64;

function stringify(values: Readonly<Record<string, BiosValue>>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, biosValueToString(v)]));
}

interface BiosState {
  readonly biosUri: string;
  readonly bios: BiosResource;
  readonly settingsUri: string;
  readonly settingsEtag: string | undefined;
  readonly settings: Readonly<Record<string, BiosValue>>;
  readonly schema: Readonly<Record<string, BiosAttributeSchema>>;
}

/** Builds the BIOS settings capability (the registry is read once per driver). */
export function createBiosSettingsControl(ctx: RedfishContext): BiosSettingsControl {
  const registries = new Map<string, Promise<Record<string, BiosAttributeSchema> | undefined>>();

  const findRegistry = async (name: string): Promise<Record<string, BiosAttributeSchema> | undefined> => {
    const root = await ctx.root();
    if (root.registries === undefined) return undefined;
    const members = (await ctx.fetch(root.registries, decodeCollection)).value;
    const direct = members.filter((m) => lastSegment(m) === name);
    const ordered = [...direct, ...members.filter((m) => !direct.includes(m) && /bios|attribute/i.test(m))].slice(0, MAX_REGISTRY_FILES);
    for (const member of ordered) {
      const { value: file } = await ctx.fetch(member, decodeRegistryFile);
      if (file.id !== name && file.registry !== name && lastSegment(member) !== name) continue;
      const location = file.locations.find((l) => l.language === undefined || l.language.startsWith('en')) ?? file.locations[0];
      if (location === undefined) return undefined;
      return (await ctx.fetch(location.uri, decodeAttributeRegistry)).value;
    }
    return undefined;
  };

  const read = async (): Promise<BiosState> => {
    const { value: system } = await ctx.system();
    const biosUri = system.links.bios;
    if (biosUri === undefined) throw ctx.unsupported('biosSettings', 'getBiosSettings', 'the System has no Bios resource');
    const { value: bios } = await ctx.fetch(biosUri, decodeBios);
    let schema: Record<string, BiosAttributeSchema> | undefined;
    const name = bios.attributeRegistry;
    if (name !== undefined) {
      let pending = registries.get(name);
      if (pending === undefined) {
        pending = findRegistry(name);
        registries.set(name, pending);
        pending.catch(() => registries.delete(name));
      }
      schema = await pending;
    }
    const settingsUri = bios.settingsObject ?? `${biosUri.replace(/\/+$/, '')}/Settings`;
    let settings: Readonly<Record<string, BiosValue>> = {};
    let settingsEtag: string | undefined;
    if (bios.settingsObject !== undefined) {
      const fetched = await ctx.fetch(settingsUri, decodeBios);
      settings = fetched.value.attributes;
      settingsEtag = fetched.etag;
    }
    return { biosUri, bios, settingsUri, settingsEtag, settings, schema: schema ?? inferBiosSchema(bios.attributes) };
  };

  return {
    async getBiosSettings() {
      const state = await read();
      return {
        current: stringify(state.bios.attributes),
        schema: state.schema,
        pending: stringify(pendingBiosValues(state.bios.attributes, state.settings)),
      };
    },
    async applyBiosSettings(changes) {
      const state = await read();
      const pending = pendingBiosValues(state.bios.attributes, state.settings);
      const plan = planBiosChanges(changes, state.bios.attributes, pending, state.schema);
      if (plan.problems.length > 0) throw redfishProtocolError(ctx.at(state.biosUri), `BIOS settings refused: ${plan.problems.join('; ')}`);
      if (Object.keys(plan.patch).length === 0) return { rebootRequired: Object.keys(pending).length > 0, taskId: undefined };
      const body: Record<string, unknown> = { Attributes: plan.patch };
      if (ctx.quirks.biosApplyTime && state.bios.supportedApplyTimes?.includes('OnReset') === true) {
        body['@Redfish.SettingsApplyTime'] = { ApplyTime: 'OnReset' };
      }
      const res = await ctx.client.patch(state.settingsUri, body, state.settingsEtag);
      const vendorTask = ctx.quirks.afterBiosPatch === undefined ? undefined : await ctx.quirks.afterBiosPatch(ctx, state.settingsUri);
      const taskId = vendorTask ?? (res.status === 202 ? ctx.client.taskPathOf(res) : undefined);
      return { rebootRequired: true, taskId };
    },
  };
}

/** Builds the Secure Boot capability. */
export function createSecureBootControl(ctx: RedfishContext): SecureBootControl {
  const resource = async (operation: string): Promise<string> => {
    const uri = (await ctx.system()).value.links.secureBoot;
    if (uri === undefined) throw ctx.unsupported('secureBoot', operation, 'the System has no SecureBoot resource');
    return uri;
  };
  return {
    async getSecureBoot() {
      const { value } = await ctx.fetch(await resource('getSecureBoot'), decodeSecureBoot);
      return { enabled: value.enabled ?? false, currentBoot: value.currentBoot };
    },
    async setSecureBoot(enabled) {
      const { value, etag, path } = await ctx.fetch(await resource('setSecureBoot'), decodeSecureBoot);
      if (value.enabled === enabled) return;
      await ctx.client.patch(path, { SecureBootEnable: enabled }, etag);
    },
  };
}
