/**
 * @module The boot governor (config `governor`): the local provisioner asks it before every
 * power-on into a network boot (ramdisk, live ISO) and before handing a deploy to a running
 * ramdisk (the image it will stream), and it answers go or wait from the budgets and the FIFO
 * line of governor-budget.ts. A waiting host is not held anywhere: its reconcile returns and
 * frees its slot, and the governor wakes it (the reconciler's `wake`) when its turn comes, so
 * non-boot work never waits behind boots. What each boot costs comes from the files it will
 * fetch: the ramdisk kernel + initrd (or the rackside ISO by virtual media), plus the image for
 * a deploy. The operator sees why a host waits in a `BootQueued` event (`rackside describe
 * host`), and in `rackside_governor_*` metrics. Unconfigured, the agent makes no governor.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AUTO_LINK_SHARE, mbpsToBytesPerSecond, type GovernorConfig } from '../config-governor.js';
import { BootBudget, pacingMs, type Admission, type BootCost, type BudgetLimits, type GovernedResource, type Waiting } from './governor-budget.js';

/** How a governed operation reaches the host. */
export type BootPath = 'network' | 'virtual-media' | 'none';

/** What the provisioner asks about. */
export interface BootRequest {
  /** The host's uid (the line's key). */
  uid: string;
  /** The host's name (for waking its reconcile). */
  name: string;
  /** `network`/`virtual-media`: a power-on into that boot; `none`: no power-on (fast track). */
  path: BootPath;
  /** Bytes of an image the ramdisk will stream from boot HTTP (deploy), or of a live ISO; else 0. */
  imageBytes: number;
}

/** The answer, with the event text to publish when there is one. */
export type GovernorDecision =
  | { admitted: true; waitedMs: number; cost: BootCost; message?: string }
  | { admitted: false; cost: BootCost; wait: Waiting; message?: string };

/** Sizes of what a ramdisk boot fetches, in bytes (0 when the file is missing). */
export interface RamdiskSizes {
  /** `vmlinuz` + `initrd`: what a network boot fetches. */
  networkBytes: number;
  /** `rackside.iso`: what a virtual-media boot fetches. */
  isoBytes: number;
}

/** Counters for /metrics. */
export interface GovernorStats {
  limits: BudgetLimits;
  waiting: number;
  admitted: number;
  admittedAfterWait: number;
  /** Sum of waits of admitted hosts, seconds. */
  waitSecondsTotal: number;
  /** Longest wait of a host now in line, seconds. */
  oldestWaitSeconds: number;
  /** Estimated bytes, DHCP exchanges and power-ons admitted. */
  drawn: { httpBytes: number; dhcpExchanges: number; powerOns: number };
}

/** Options of {@link BootGovernor}. */
export interface BootGovernorOptions {
  limits: BudgetLimits;
  nowMs: () => number;
  /** Runs the reconcile of host `name` soon (the reconciler's `wake`). */
  wake: (name: string) => void;
  ramdiskSizes: () => Promise<RamdiskSizes>;
  /** How long a host whose turn came has to claim it; default 30 s. */
  claimGraceMs?: number;
  /** A host that stopped asking leaves the line after this; default 15 min. */
  staleMs?: number;
  /**
   * DHCP exchanges a power-on into a network boot causes at once: the firmware's PXE lease and
   * iPXE's; default 2. The ramdisk's own lease follows its kernel and initrd downloads (spread
   * by the HTTP budget when there is one) and is not counted.
   */
  dhcpPerNetworkBoot?: number;
}

/** Mebibytes with one decimal, for messages. */
function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** A budget in the operator's words, with what this boot draws from it. */
function describeBudget(limits: BudgetLimits, resource: GovernedResource, cost: BootCost): string {
  switch (resource) {
    case 'http':
      return `boot HTTP budget ${((limits.httpBytesPerSecond ?? 0) * 8 / 1e6).toFixed(0)} Mbit/s (this boot fetches ≈ ${mib(cost.httpBytes)})`;
    case 'dhcp':
      return `DHCP budget ${String(limits.dhcpPerSecond ?? 0)}/s (this boot takes ${String(cost.dhcpExchanges)} leases)`;
    case 'powerOns':
      return `power-on budget ${String(limits.powerOnsPerMinute ?? 0)}/min`;
  }
}

/** The budget this cost occupies longest: the one that paces it (and the line it waits in). */
function pacingBudget(limits: BudgetLimits, cost: BootCost): GovernedResource {
  const resources: GovernedResource[] = ['http', 'dhcp', 'powerOns'];
  return resources.reduce((best, r) => (pacingMs(limits, r, cost) > pacingMs(limits, best, cost) ? r : best));
}

/** The `BootQueued` event text of a host that joined the line. */
export function queuedMessage(limits: BudgetLimits, wait: Waiting, cost: BootCost, nowMs: number): string {
  const ahead = wait.position - 1;
  const budget = describeBudget(limits, wait.limitedBy === 'line' ? pacingBudget(limits, cost) : wait.limitedBy, cost);
  return `power-on held by the boot governor: ${ahead === 0 ? 'first in line' : `${String(ahead)} host${ahead === 1 ? '' : 's'} ahead in line`}, ` +
    `paced by the ${budget}; expected to start in ≈ ${seconds(Math.max(0, wait.readyAtMs - nowMs))}`;
}

/** The governor (see the module comment). */
export class BootGovernor {
  readonly #budget: BootBudget;
  readonly #names = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #stats = { admitted: 0, admittedAfterWait: 0, waitSecondsTotal: 0, drawn: { httpBytes: 0, dhcpExchanges: 0, powerOns: 0 } };

  constructor(private readonly options: BootGovernorOptions) {
    this.#budget = new BootBudget(options.limits, { claimGraceMs: options.claimGraceMs ?? 30_000, staleMs: options.staleMs ?? 15 * 60_000 });
  }

  /** The configured budgets. */
  get limits(): BudgetLimits {
    return this.options.limits;
  }

  /** What `request` draws from the budgets: the files its boot fetches, its leases, its power-on. */
  async costOf(request: Pick<BootRequest, 'path' | 'imageBytes'>): Promise<BootCost> {
    const image = Math.max(0, request.imageBytes);
    if (request.path === 'none') return { httpBytes: image, dhcpExchanges: 0, powerOns: 0 };
    const sizes = await this.options.ramdiskSizes();
    return request.path === 'network'
      ? { httpBytes: sizes.networkBytes + image, dhcpExchanges: this.options.dhcpPerNetworkBoot ?? 2, powerOns: 1 }
      // The BMC fetches the ISO over boot HTTP; no firmware lease (the ramdisk's comes later).
      : { httpBytes: sizes.isoBytes + image, dhcpExchanges: 0, powerOns: 1 };
  }

  /** Asks whether the host of `request` may go now (see the module comment); never waits. */
  async admit(request: BootRequest): Promise<GovernorDecision> {
    const cost = await this.costOf(request);
    return this.decide(request, cost);
  }

  /** {@link admit} with the cost already known. */
  decide(request: Pick<BootRequest, 'uid' | 'name'>, cost: BootCost): GovernorDecision {
    const now = this.options.nowMs();
    this.#names.set(request.uid, request.name);
    const answer: Admission = this.#budget.request(request.uid, cost, now);
    let decision: GovernorDecision;
    if (answer.admitted) {
      this.#names.delete(request.uid);
      this.#stats.admitted += 1;
      this.#stats.drawn.httpBytes += cost.httpBytes;
      this.#stats.drawn.dhcpExchanges += cost.dhcpExchanges;
      this.#stats.drawn.powerOns += cost.powerOns;
      if (answer.waitedMs > 0) {
        this.#stats.admittedAfterWait += 1;
        this.#stats.waitSecondsTotal += answer.waitedMs / 1000;
      }
      decision = answer.waitedMs > 0
        ? { admitted: true, waitedMs: answer.waitedMs, cost, message: `power-on admitted by the boot governor after ${seconds(answer.waitedMs)} in line` }
        : { admitted: true, waitedMs: 0, cost };
    } else {
      decision = answer.joined
        ? { admitted: false, cost, wait: answer, message: queuedMessage(this.options.limits, answer, cost, now) }
        : { admitted: false, cost, wait: answer };
    }
    this.reschedule();
    return decision;
  }

  /** Takes host `uid` out of the line (deleted, or its operation no longer needs a boot). */
  forget(uid: string): void {
    this.#names.delete(uid);
    if (this.#budget.forget(uid)) this.reschedule();
  }

  /** Numbers for /metrics and the status page. */
  stats(): GovernorStats {
    const now = this.options.nowMs();
    const line = this.#budget.line();
    const oldest = line.reduce((max, t) => Math.max(max, now - t.sinceMs), 0);
    return { limits: this.options.limits, waiting: line.length, ...this.#stats, drawn: { ...this.#stats.drawn }, oldestWaitSeconds: oldest / 1000 };
  }

  /** Stops the timer (agent shutdown). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  /** Sets the one timer: to call the next host at its time, or to look again when a called host turns absent. */
  private reschedule(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#closed) return;
    const now = this.options.nowMs();
    for (const key of this.#budget.expire(now)) this.#names.delete(key);
    const next = this.#budget.next(now);
    let atMs = next !== undefined && !next.called ? next.atMs : undefined;
    const absence = this.#budget.nextAbsenceMs(now);
    if (absence !== undefined) atMs = Math.min(atMs ?? Infinity, absence + 1);
    if (atMs === undefined) return;
    this.#timer = setTimeout(() => {
      this.call();
    }, Math.max(0, Math.ceil(atMs - now)));
    this.#timer.unref();
  }

  /** The timer: if the next host's turn has come, note it and wake its reconcile. */
  private call(): void {
    const now = this.options.nowMs();
    const next = this.#budget.next(now);
    if (next !== undefined && !next.called && next.atMs <= now) {
      this.#budget.markCalled(next.key, now);
      const name = this.#names.get(next.key);
      if (name !== undefined) this.options.wake(name);
    }
    this.reschedule();
  }
}

/**
 * Asks `governor` (none: always go) whether the host of `request` may boot now: true to go,
 * false to wait. The first wait is published as a `BootQueued` event (why, how many ahead, how
 * long), an admission after a wait as `BootAdmitted`; the governor wakes the host when its turn comes.
 */
export async function admitBoot(governor: BootGovernor | undefined, request: BootRequest, publish: (reason: string, message: string) => void): Promise<boolean> {
  if (governor === undefined) return true;
  const decision = await governor.admit(request);
  if (decision.message !== undefined) publish(decision.admitted ? 'BootAdmitted' : 'BootQueued', decision.message);
  return decision.admitted;
}

/**
 * Reads the sizes of the ramdisk files in `ramdiskDir` (`vmlinuz`, `initrd`, `rackside.iso`),
 * at most once per `cacheMs` (default 30 s): a rebuilt ramdisk is priced from then on.
 */
export function ramdiskSizesIn(ramdiskDir: string, nowMs: () => number, cacheMs = 30_000): () => Promise<RamdiskSizes> {
  let cached: { atMs: number; sizes: RamdiskSizes } | undefined;
  const size = async (name: string): Promise<number> => (await stat(join(ramdiskDir, name)).catch(() => undefined))?.size ?? 0;
  return async () => {
    const now = nowMs();
    if (cached !== undefined && now - cached.atMs < cacheMs) return cached.sizes;
    const [kernel, initrd, iso] = await Promise.all([size('vmlinuz'), size('initrd'), size('rackside.iso')]);
    cached = { atMs: now, sizes: { networkBytes: kernel + initrd, isoBytes: iso } };
    return cached.sizes;
  };
}

/** The link speed of network interface `iface` in Mbit/s from sysfs; undefined when unknown (down, virtual, -1). */
export async function linkSpeedMbps(iface: string, sysfs = '/sys/class/net'): Promise<number | undefined> {
  const text = await readFile(join(sysfs, iface, 'speed'), 'utf8').catch(() => undefined);
  const mbps = text === undefined ? NaN : Number(text.trim());
  return Number.isFinite(mbps) && mbps > 0 ? mbps : undefined;
}

/**
 * The budgets of config `governor` (`httpMbps: auto` read from `iface`'s link speed), and a
 * warning when `auto` found no speed (that budget is then off). Undefined: no budget, no governor.
 */
export async function governorLimits(config: GovernorConfig | undefined, iface: string | undefined, readSpeed = linkSpeedMbps): Promise<{ limits: BudgetLimits; warning?: string } | undefined> {
  if (config === undefined) return undefined;
  let warning: string | undefined;
  let httpMbps: number | undefined;
  if (config.httpMbps === 'auto') {
    const speed = iface === undefined ? undefined : await readSpeed(iface);
    if (speed === undefined) warning = `governor.httpMbps: auto: the link speed of ${iface ?? 'the provisioning interface'} is unknown; no boot HTTP budget (set a number of Mbit/s)`;
    else httpMbps = speed * AUTO_LINK_SHARE;
  } else httpMbps = config.httpMbps;
  const limits: BudgetLimits = {
    ...(httpMbps === undefined ? {} : { httpBytesPerSecond: mbpsToBytesPerSecond(httpMbps) }),
    ...(config.dhcpPerSecond === undefined ? {} : { dhcpPerSecond: config.dhcpPerSecond }),
    ...(config.bootsPerMinute === undefined ? {} : { powerOnsPerMinute: config.bootsPerMinute }),
  };
  if (Object.keys(limits).length === 0) return warning === undefined ? undefined : { limits, warning };
  return warning === undefined ? { limits } : { limits, warning };
}
