/**
 * @module The agent's ramdisks, one per architecture, side by side under `images.cacheDir`
 * (ramdisk-builds.ts each): the head node's at `ramdisk/` is checked and built at start, as it
 * always was; another architecture's (`ramdisk/arm64/`, served as `/ramdisk/arm64/vmlinuz`) is
 * built only once a host of that architecture needs it, and hosts wait for it the same way
 * (WaitingForRamdisk). The status page, `/metrics` and `rackside doctor` report the head node's
 * build as before; {@link RamdiskBuildSet.statuses} has them all.
 */
import type { Registry } from 'prom-client';
import { HEAD_NODE_ARCH, type DebianArch } from '../../../images/index.js';
import type { RamdiskBuildStatus, RamdiskFormat, RamdiskGate } from './ramdisk-build-status.js';
import { RamdiskBuilds, registerRamdiskBuildMetrics, type RamdiskBuildsOptions } from './ramdisk-builds.js';

/** The builds of every architecture (see the module comment). */
export class RamdiskBuildSet {
  readonly #builds = new Map<DebianArch, RamdiskBuilds>();
  #stopped = false;

  /** `options` as for the head node's build; other architectures get the same with their `arch`. */
  constructor(private readonly options: Omit<RamdiskBuildsOptions, 'arch'>, private readonly create: (options: RamdiskBuildsOptions) => RamdiskBuilds = (o) => new RamdiskBuilds(o)) {
    this.#builds.set(HEAD_NODE_ARCH, create({ ...options, arch: HEAD_NODE_ARCH }));
  }

  /** The build of `arch`, created (not started) on first use. */
  #of(arch: DebianArch): RamdiskBuilds {
    let builds = this.#builds.get(arch);
    if (builds === undefined) {
      builds = this.create({ ...this.options, arch });
      this.#builds.set(arch, builds);
    }
    return builds;
  }

  /** Starts the head node's build (see RamdiskBuilds.start). */
  start(needIso: boolean): void {
    this.#of(HEAD_NODE_ARCH).start(needIso);
  }

  /** Whether host `name` may boot the `arch` ramdisk of `format` now (RamdiskBuilds.gate; the first ask of another architecture starts its build). */
  gate(name: string, format: RamdiskFormat, arch: DebianArch = HEAD_NODE_ARCH): RamdiskGate {
    if (this.#stopped) return { kind: 'wait', message: 'the agent is stopping', changed: false };
    // A host asks one architecture at a time: it waits on no other build.
    for (const [other, builds] of this.#builds) if (other !== arch) builds.forget(name);
    return this.#of(arch).gate(name, format);
  }

  /** Forgets host `name` in every build. */
  forget(name: string): void {
    for (const builds of this.#builds.values()) builds.forget(name);
  }

  /** The head node's build status (status page, status file, metrics: unchanged). */
  status(): RamdiskBuildStatus {
    return this.#of(HEAD_NODE_ARCH).status();
  }

  /** The status of every build created so far, by architecture. */
  statuses(): Partial<Record<DebianArch, RamdiskBuildStatus>> {
    return Object.fromEntries([...this.#builds].map(([arch, b]) => [arch, b.status()]));
  }

  /** Every build so far, the head node's first (status page and API `bootServices.ramdisks`). */
  all(): RamdiskBuildStatus[] {
    const head = this.#of(HEAD_NODE_ARCH);
    return [head, ...[...this.#builds.values()].filter((b) => b !== head)].map((b) => b.status());
  }

  /** Registers the build metrics of every architecture (docs/metrics.md; the head node's series unlabelled, as before). */
  register(registry: Registry): void {
    registerRamdiskBuildMetrics(registry, () => this.all());
  }

  /** Stops every build. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#builds.values()].map((b) => b.stop()));
  }
}
