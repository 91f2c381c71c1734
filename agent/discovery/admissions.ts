/**
 * @module Bounded admissions of unknown MACs to discovery (docs/discovery.md, "Limits"). A MAC
 * that network-boots while discovery is on is admitted once: it gets a discovery token, bound to
 * it, that lives `tokenTtlMs` from admission, and holds one of `maxPending` slots until its
 * ramdisk reports (or the token expires). A MAC asking again while admitted gets the same token.
 * When the slots are full, or the store already holds `maxHosts` discovered hosts, the MAC is
 * refused and the refusal counted by reason: a storm of random MACs costs at most `maxPending`
 * entries here and nothing in the store. Times come in as arguments; tokens from `newToken`.
 * @pure
 */

/** Why an unknown MAC was not admitted. */
export type RefusalReason = 'pending-full' | 'hosts-full';

/** The bounds of {@link DiscoveryAdmissions}. */
export interface AdmissionLimits {
  /** MACs admitted and not yet reported, at most. */
  maxPending: number;
  /** Discovered hosts in the store, at most. */
  maxHosts: number;
  /** Life of a token from its admission. */
  tokenTtlMs: number;
}

/** An admitted MAC. */
export interface Admission {
  mac: string;
  token: string;
  admittedAtMs: number;
  expiresAtMs: number;
}

/** The answer to {@link DiscoveryAdmissions.admit}. */
export type AdmitOutcome = { admitted: true; admission: Admission; fresh: boolean } | { admitted: false; reason: RefusalReason };

/** What the admissions counted since start (metrics `rackside_discovery_*`). */
export interface AdmissionStats {
  /** MACs holding a slot now. */
  pending: number;
  /** Admissions made (a MAC asking again while admitted is not counted again). */
  admitted: number;
  /** Refusals by reason, each ask counted. */
  refused: Record<RefusalReason, number>;
  /** Tokens that expired unreported. */
  expired: number;
}

/** The admission table (see the module comment). Not thread-safe; one per agent. */
export class DiscoveryAdmissions {
  private readonly byMac = new Map<string, Admission>();
  private readonly byToken = new Map<string, Admission>();
  private readonly counters: Omit<AdmissionStats, 'pending'> = { admitted: 0, refused: { 'pending-full': 0, 'hosts-full': 0 }, expired: 0 };

  constructor(private readonly limits: AdmissionLimits, private readonly newToken: () => string) {}

  /**
   * Admits `mac` (lower-case colon form) at `nowMs`, `discoveredHosts` being how many
   * discovered hosts the store holds now. The same MAC gets its live admission back.
   */
  admit(mac: string, nowMs: number, discoveredHosts: number): AdmitOutcome {
    this.sweep(nowMs);
    const live = this.byMac.get(mac);
    if (live !== undefined) return { admitted: true, admission: live, fresh: false };
    if (discoveredHosts >= this.limits.maxHosts) return this.refuse('hosts-full');
    if (this.byMac.size >= this.limits.maxPending) return this.refuse('pending-full');
    const admission: Admission = { mac, token: this.newToken(), admittedAtMs: nowMs, expiresAtMs: nowMs + this.limits.tokenTtlMs };
    this.byMac.set(mac, admission);
    this.byToken.set(admission.token, admission);
    this.counters.admitted += 1;
    return { admitted: true, admission, fresh: true };
  }

  /** The live admission `token` belongs to, or undefined (unknown, forged, expired or already used). */
  find(token: string, nowMs: number): Admission | undefined {
    this.sweep(nowMs);
    return token === '' ? undefined : this.byToken.get(token);
  }

  /** Frees `mac`'s slot (its report was taken); its token stops working. */
  release(mac: string): void {
    const admission = this.byMac.get(mac);
    if (admission === undefined) return;
    this.byMac.delete(mac);
    this.byToken.delete(admission.token);
  }

  /** Counters and the pending count. */
  stats(nowMs: number): AdmissionStats {
    this.sweep(nowMs);
    return { pending: this.byMac.size, admitted: this.counters.admitted, refused: { ...this.counters.refused }, expired: this.counters.expired };
  }

  private refuse(reason: RefusalReason): AdmitOutcome {
    this.counters.refused[reason] += 1;
    return { admitted: false, reason };
  }

  /** Drops expired admissions; insertion order is expiry order (one TTL for all). */
  private sweep(nowMs: number): void {
    for (const admission of this.byMac.values()) {
      if (admission.expiresAtMs > nowMs) break;
      this.byMac.delete(admission.mac);
      this.byToken.delete(admission.token);
      this.counters.expired += 1;
    }
  }
}
