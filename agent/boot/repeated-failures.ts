/**
 * @module The same boot request failing the same way again and again — iPXE asking for a
 * ramdisk that is not there every 10 s, a firmware re-reading a file TFTP cannot send — is one
 * fact, not a column of identical warnings. {@link RepeatTracker} follows each client's
 * requests (an HTTP method and path, a TFTP file) and their outcome: the first failure is
 * stored as it is, the repeats are not; when the run reaches the threshold (3), and each time
 * it doubles after, one `BootFailureRepeated` summary is stored instead, with the count and
 * when the run began. A success of that request ends its run. The status page's and `describe
 * host`'s diagnosis (agent/web/ui/diagnosis.ts) turn the summary into one finding.
 * @pure
 */
import type { BootEvent } from '../../bootsvc/index.js';
import { redactBootPath } from './boot-event-format.js';

/** A boot request and how it ended: `failure` names the failure (`404`, `TFTP error 1: …`); undefined: it succeeded. */
export interface RequestOutcome {
  request: string;
  failure?: string;
}

/** The stored summary of a run of identical failures (event reason `BootFailureRepeated`, these fields as its data). */
export interface RepeatedFailure {
  request: string;
  failure: string;
  /** Failures in the run so far. */
  count: number;
  /** When the first failure of the run happened (ms). */
  firstMs: number;
}

/** The request and outcome of a boot event; undefined for events that are not a request's end (DHCP, TFTP options, BMC…). */
export function outcomeOf(event: BootEvent): RequestOutcome | undefined {
  if (event.kind === 'http') {
    const request = `${event.method} ${redactBootPath(event.path)}`;
    // A probe's 404 is expected (servedAs probe); an aborted body is the client's business.
    return event.status >= 400 && event.servedAs !== 'probe' ? { request, failure: String(event.status) } : { request };
  }
  if (event.kind === 'tftp' && (event.phase === 'error' || event.phase === 'done')) {
    const request = `TFTP ${event.file}`;
    return event.phase === 'done' ? { request } : { request, failure: `error${event.errorCode === undefined ? '' : ` ${event.errorCode}`}: ${event.error ?? 'unknown'}` };
  }
  return undefined;
}

/** What to do with an event: store it, and/or store a summary of the run it belongs to. */
export interface RepeatVerdict {
  store: boolean;
  summary?: RepeatedFailure;
}

interface Run {
  failure: string;
  count: number;
  firstMs: number;
  nextReport: number;
}

/** Follows runs of identical failures per client (see the module comment); bounded in clients and requests per client. */
export class RepeatTracker {
  readonly #clients = new Map<string, Map<string, Run>>();

  constructor(private readonly threshold = 3, private readonly maxClients = 4096, private readonly maxRequestsPerClient = 32) {
    if (!Number.isInteger(threshold) || threshold < 2) throw new RangeError('the repeat threshold must be an integer of at least 2');
  }

  /** Observes `outcome` of client `client` at `atMs`. */
  observe(client: string, outcome: RequestOutcome, atMs: number): RepeatVerdict {
    let runs = this.#clients.get(client);
    if (runs !== undefined) this.#clients.delete(client); // re-inserted below: most recently used last
    runs ??= new Map();
    this.#clients.set(client, runs);
    if (this.#clients.size > this.maxClients) this.#clients.delete(this.#clients.keys().next().value ?? '');
    const run = runs.get(outcome.request);
    if (outcome.failure === undefined) {
      runs.delete(outcome.request);
      return { store: true };
    }
    if (run?.failure !== outcome.failure) {
      runs.delete(outcome.request);
      runs.set(outcome.request, { failure: outcome.failure, count: 1, firstMs: atMs, nextReport: this.threshold });
      if (runs.size > this.maxRequestsPerClient) runs.delete(runs.keys().next().value ?? '');
      return { store: true };
    }
    run.count += 1;
    if (run.count < run.nextReport) return { store: false };
    run.nextReport *= 2;
    return { store: false, summary: { request: outcome.request, failure: run.failure, count: run.count, firstMs: run.firstMs } };
  }
}

/** The message of a `BootFailureRepeated` event. */
export function repeatedFailureMessage(r: RepeatedFailure): string {
  const how = r.request.startsWith('TFTP ') ? `failed (${r.failure})` : `→ ${r.failure}`;
  return `${r.request} ${how}: the same failure ${r.count} times in a row since ${new Date(r.firstMs).toISOString()} (the repeats are not stored one by one)`;
}
