/**
 * @module The boot governor's admission decision (config `governor`): whether a host may be
 * powered on into a network boot now, given budgets for boot HTTP bytes per second, DHCP
 * exchanges per second and power-ons per minute, and a first-come first-served line of the
 * hosts already waiting.
 *
 * Each budget is a pacing rule (the virtual-scheduling form of the Generic Cell Rate
 * Algorithm, ITU-T I.371 / RFC 2697's token bucket with a bucket of one request): a boot
 * costing `c` of a resource whose rate is `r` moves that resource's "next free" time on by
 * `c / r`, and the next boot needing the resource may start no earlier. So boots start spaced
 * by what they will fetch: 40 ramdisk boots of 34 MiB on a 1 Gbit/s budget start 0.29 s apart,
 * 40 deploys of a 2 GiB image 17 s apart — the link's own limit, without the pile-up that makes
 * iPXE and the ramdisk time out. Budgets nobody configured cost nothing.
 *
 * The line is strict FIFO (nobody starves): a host asks, waits its turn, and must come back
 * to claim it. A host called (its turn came: everyone ahead admitted or absent, the budget
 * free) that does not ask again within `claimGraceMs` is *absent*: the next in line may go,
 * while the absent host keeps its place and goes first once it asks again. A host silent for
 * `staleMs` leaves the line. Nothing here keeps time: every method takes `nowMs`.
 * @pure
 */

/** The resources a boot draws on. */
export type GovernedResource = 'http' | 'dhcp' | 'powerOns';

/** Configured rates; an absent or non-positive rate is no budget for that resource. */
export interface BudgetLimits {
  /** Boot HTTP body bytes per second. */
  httpBytesPerSecond?: number;
  /** DHCP exchanges (one lease: DISCOVER … ACK) per second. */
  dhcpPerSecond?: number;
  /** Power-ons per minute, whatever the boot path. */
  powerOnsPerMinute?: number;
}

/** What one admission draws: bytes boot HTTP will send, DHCP exchanges, power-ons. */
export interface BootCost {
  httpBytes: number;
  dhcpExchanges: number;
  powerOns: number;
}

/** Timing of the line. */
export interface BudgetOptions {
  /** How long a called host has to ask again before the next one may go. */
  claimGraceMs: number;
  /** A host that has not asked for this long leaves the line. */
  staleMs: number;
}

/** Go now. `waitedMs`: time since the host first asked (0 when it went at once). */
export interface Admitted {
  admitted: true;
  waitedMs: number;
}

/** Wait. */
export interface Waiting {
  admitted: false;
  /** 1-based place in the line. */
  position: number;
  /** Hosts in the line, this one included. */
  waiting: number;
  /** When this host's turn is expected if everyone ahead claims theirs on time. */
  readyAtMs: number;
  /** What holds it: a budget, or hosts ahead in line. */
  limitedBy: GovernedResource | 'line';
  /** True on the host's first ask of this wait (it just joined the line). */
  joined: boolean;
  /** When the host joined the line. */
  sinceMs: number;
}

/** The answer to a request. */
export type Admission = Admitted | Waiting;

/** A host in the line. */
export interface Ticket {
  readonly key: string;
  cost: BootCost;
  readonly sinceMs: number;
  lastAskMs: number;
  /** When its turn came (it was told to come and claim it). */
  calledAtMs?: number;
}

const RESOURCES: readonly GovernedResource[] = ['http', 'dhcp', 'powerOns'];

/** The time one admission of `cost` occupies `resource` at `limits` (0: no budget or no cost). */
export function pacingMs(limits: BudgetLimits, resource: GovernedResource, cost: BootCost): number {
  const [amount, perMs] = resource === 'http'
    ? [cost.httpBytes, (limits.httpBytesPerSecond ?? 0) / 1000]
    : resource === 'dhcp'
      ? [cost.dhcpExchanges, (limits.dhcpPerSecond ?? 0) / 1000]
      : [cost.powerOns, (limits.powerOnsPerMinute ?? 0) / 60_000];
  return amount > 0 && perMs > 0 ? amount / perMs : 0;
}

/** True when no configured budget is drawn by `cost` (it never waits). */
export function isFree(limits: BudgetLimits, cost: BootCost): boolean {
  return RESOURCES.every((r) => pacingMs(limits, r, cost) === 0);
}

type FreeAt = Record<GovernedResource, number>;

/** The earliest time `cost` fits the budgets whose next free times are `freeAt`, and the resource that decides it. */
function readyAt(limits: BudgetLimits, freeAt: FreeAt, cost: BootCost, nowMs: number): { atMs: number; by: GovernedResource | undefined } {
  let atMs = nowMs;
  let by: GovernedResource | undefined;
  for (const r of RESOURCES) {
    if (pacingMs(limits, r, cost) > 0 && freeAt[r] > atMs) {
      atMs = freeAt[r];
      by = r;
    }
  }
  return { atMs, by };
}

/** Moves the budgets on for an admission of `cost` at `atMs`. */
function draw(limits: BudgetLimits, freeAt: FreeAt, cost: BootCost, atMs: number): void {
  for (const r of RESOURCES) {
    const ms = pacingMs(limits, r, cost);
    if (ms > 0) freeAt[r] = Math.max(freeAt[r], atMs) + ms;
  }
}

/** The budgets and the line (see the module comment). */
export class BootBudget {
  readonly #freeAt: FreeAt = { http: -Infinity, dhcp: -Infinity, powerOns: -Infinity };
  readonly #line: Ticket[] = [];

  constructor(readonly limits: BudgetLimits, private readonly options: BudgetOptions) {}

  /**
   * Host `key` asks to boot at a cost of `cost`: admitted (the budgets are drawn and it leaves
   * the line) or told to wait (it joins the line on its first ask). A cost that draws on no
   * configured budget is always admitted at once.
   */
  request(key: string, cost: BootCost, nowMs: number): Admission {
    this.expire(nowMs);
    let index = this.#line.findIndex((t) => t.key === key);
    if (isFree(this.limits, cost)) {
      const ticket = index < 0 ? undefined : this.#line.splice(index, 1)[0];
      return { admitted: true, waitedMs: ticket === undefined ? 0 : nowMs - ticket.sinceMs };
    }
    const joined = index < 0;
    if (joined) {
      index = this.#line.length;
      this.#line.push({ key, cost, sinceMs: nowMs, lastAskMs: nowMs });
    }
    const ticket = this.#line[index];
    if (ticket === undefined) throw new Error('boot budget: ticket lost');
    ticket.cost = cost;
    ticket.lastAskMs = nowMs;
    const ahead = this.#line.slice(0, index).filter((t) => !this.isAbsent(t, nowMs));
    const ready = readyAt(this.limits, this.#freeAt, cost, nowMs);
    if (ahead.length === 0 && ready.atMs <= nowMs) {
      this.#line.splice(index, 1);
      draw(this.limits, this.#freeAt, cost, nowMs);
      return { admitted: true, waitedMs: nowMs - ticket.sinceMs };
    }
    return {
      admitted: false,
      position: index + 1,
      waiting: this.#line.length,
      readyAtMs: this.estimate(index, nowMs),
      limitedBy: ahead.length > 0 ? 'line' : ready.by ?? 'line',
      joined,
      sinceMs: ticket.sinceMs,
    };
  }

  /** Removes `key` from the line (its host was deleted, or no longer needs the boot); true when it was in it. */
  forget(key: string): boolean {
    const index = this.#line.findIndex((t) => t.key === key);
    if (index < 0) return false;
    this.#line.splice(index, 1);
    return true;
  }

  /**
   * Whose turn comes next and when: the first host in line that is not absent, once everyone
   * ahead of it is absent — at the time the budgets can take its cost. Undefined when the line
   * is empty or only absent hosts are in it.
   */
  next(nowMs: number): { key: string; atMs: number; called: boolean } | undefined {
    this.expire(nowMs);
    const ticket = this.#line.find((t) => !this.isAbsent(t, nowMs));
    if (ticket === undefined) return undefined;
    return { key: ticket.key, atMs: readyAt(this.limits, this.#freeAt, ticket.cost, nowMs).atMs, called: ticket.calledAtMs !== undefined && ticket.calledAtMs > ticket.lastAskMs };
  }

  /** Notes that `key` was told its turn came (it has `claimGraceMs` to ask again). */
  markCalled(key: string, nowMs: number): void {
    const ticket = this.#line.find((t) => t.key === key);
    if (ticket !== undefined) ticket.calledAtMs = nowMs;
  }

  /** When a called host becomes absent if it does not ask, for the next look at the line; undefined when none is pending. */
  nextAbsenceMs(nowMs: number): number | undefined {
    let soonest: number | undefined;
    for (const t of this.#line) {
      if (t.calledAtMs === undefined || t.lastAskMs >= t.calledAtMs || this.isAbsent(t, nowMs)) continue;
      const at = t.calledAtMs + this.options.claimGraceMs;
      soonest = soonest === undefined ? at : Math.min(soonest, at);
    }
    return soonest;
  }

  /** The line, first come first; copies. */
  line(): Ticket[] {
    return this.#line.map((t) => ({ ...t, cost: { ...t.cost } }));
  }

  /** Drops hosts silent for `staleMs`; returns their keys. */
  expire(nowMs: number): string[] {
    const gone: string[] = [];
    for (let i = this.#line.length - 1; i >= 0; i--) {
      const t = this.#line[i];
      if (t !== undefined && nowMs - t.lastAskMs > this.options.staleMs) {
        gone.push(t.key);
        this.#line.splice(i, 1);
      }
    }
    return gone.reverse();
  }

  /** A called host that did not come back within the grace: the next in line may go. */
  private isAbsent(t: Ticket, nowMs: number): boolean {
    return t.calledAtMs !== undefined && t.lastAskMs < t.calledAtMs && nowMs - t.calledAtMs > this.options.claimGraceMs;
  }

  /** When the ticket at `index` would go if everyone ahead (absent ones too) claimed their turn on time. */
  private estimate(index: number, nowMs: number): number {
    const freeAt = { ...this.#freeAt };
    let atMs = nowMs;
    for (const t of this.#line.slice(0, index + 1)) {
      atMs = readyAt(this.limits, freeAt, t.cost, atMs).atMs;
      draw(this.limits, freeAt, t.cost, atMs);
    }
    return atMs;
  }
}
