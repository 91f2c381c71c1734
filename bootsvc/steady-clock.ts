/**
 * @module The boot services' default clock: epoch milliseconds read once from the wall clock
 * when the process loads this module, then advanced by the monotonic clock. DHCP lease, offer
 * and quarantine expiry and TFTP retransmission deadlines are durations: a wall-clock step
 * while the server runs (NTP correcting a bad RTC, `date -s`) must move none of them — forward,
 * every lease would expire at once and a held address be offered again (RFC 2131 §4.4.5 times
 * are relative to when the client got the lease); backward, a lost TFTP packet would wait a day
 * for its retransmission. The values stay epoch-like, so stored leases compare after a restart.
 * agent/clock.ts uses this clock as the agent's steady clock (one anchor per process).
 */

const startWallMs = Date.now();
const startMonotonicMs = performance.now();

/** Steady epoch milliseconds (see the module comment). */
export function steadyEpochMs(): number {
  return startWallMs + (performance.now() - startMonotonicMs);
}
