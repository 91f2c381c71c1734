/**
 * @module The figures of a PXE storm from its per-client results: completion time (first
 * DISCOVER of any client → the end of the last client), p50/p99/max duration per phase over the
 * clients that finished that phase, failures grouped by phase and reason (numbers folded, one
 * example kept), retransmissions per phase; plus merging the results of several client
 * processes and a plain-text rendering. Percentiles are nearest-rank.
 * @pure
 */
import { PHASES, type ClientResult, type PhaseName, type StormResult } from './types.js';

/** Duration figures of one phase. */
export interface PhaseFigures {
  /** Clients that completed the phase. */
  n: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  retransmissions: number;
  /** Payload bytes received in the phase, all clients. */
  bytes: number;
}

/** Failures of one kind. */
export interface FailureGroup {
  phase: PhaseName;
  /** The reason with numbers folded to `N`. */
  reason: string;
  count: number;
  /** One client's reason verbatim, and its MAC. */
  example: string;
}

/** What a storm came to. */
export interface StormSummary {
  clients: number;
  succeeded: number;
  failed: number;
  /** First `dhcp1` start → last phase end over all clients, ms. */
  completionMs: number;
  phases: Record<PhaseName, PhaseFigures>;
  failures: FailureGroup[];
  retransmissions: number;
  /** What the TFTP servers granted (`blksize N, windowsize M`) → number of clients. */
  tftpGranted: Record<string, number>;
  /** The simulator's own event-loop delay (worst worker), when reported. */
  clientEventLoop?: { p99Ms: number; maxMs: number };
}

/** Nearest-rank percentile of `values` (0 for none). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? 0;
}

/** Joins the results of several processes of one storm (client lists concatenated, sorted by index). */
export function mergeStormResults(parts: readonly StormResult[]): StormResult {
  if (parts.length === 0) throw new RangeError('nothing to merge');
  const loops = parts.map((p) => p.clientEventLoop).filter((l) => l !== undefined);
  return {
    startedMs: Math.min(...parts.map((p) => p.startedMs)),
    endedMs: Math.max(...parts.map((p) => p.endedMs)),
    clients: parts.flatMap((p) => p.clients).sort((a, b) => a.index - b.index),
    ...(loops.length === 0 ? {} : { clientEventLoop: { p99Ms: Math.max(...loops.map((l) => l.p99Ms)), maxMs: Math.max(...loops.map((l) => l.maxMs)) } }),
  };
}

function endOf(c: ClientResult): number {
  let end = 0;
  for (const name of PHASES) end = Math.max(end, c.phases[name]?.endMs ?? 0);
  return end;
}

/** Summarizes `result` (see the module comment). */
export function summarizeStorm(result: StormResult): StormSummary {
  const phases = {} as Record<PhaseName, PhaseFigures>;
  for (const name of PHASES) {
    const done = result.clients.filter((c) => c.phases[name] !== undefined && c.failure?.phase !== name);
    const durations = done.map((c) => (c.phases[name]?.endMs ?? 0) - (c.phases[name]?.startMs ?? 0));
    phases[name] = {
      n: done.length,
      p50Ms: percentile(durations, 50),
      p99Ms: percentile(durations, 99),
      maxMs: durations.length === 0 ? 0 : Math.max(...durations),
      retransmissions: result.clients.reduce((sum, c) => sum + (c.phases[name]?.retransmissions ?? 0), 0),
      bytes: result.clients.reduce((sum, c) => sum + (c.phases[name]?.bytes ?? 0), 0),
    };
  }
  const groups = new Map<string, FailureGroup>();
  for (const c of result.clients) {
    if (c.failure === undefined) continue;
    const reason = c.failure.reason.replace(/\d+(?:\.\d+)*/g, 'N');
    const key = `${c.failure.phase}\u0000${reason}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { phase: c.failure.phase, reason, count: 1, example: `${c.mac}: ${c.failure.reason}` });
    else group.count++;
  }
  const tftpGranted: Record<string, number> = {};
  for (const c of result.clients) {
    const granted = /blksize \d+, windowsize \d+/.exec(c.phases.tftp?.detail ?? '')?.[0];
    if (granted !== undefined) tftpGranted[granted] = (tftpGranted[granted] ?? 0) + 1;
  }
  const starts = result.clients.map((c) => c.phases.dhcp1?.startMs).filter((v): v is number => v !== undefined);
  const ends = result.clients.map(endOf).filter((v) => v > 0);
  const failed = result.clients.filter((c) => c.failure !== undefined).length;
  return {
    clients: result.clients.length,
    succeeded: result.clients.length - failed,
    failed,
    completionMs: starts.length === 0 || ends.length === 0 ? 0 : Math.max(...ends) - Math.min(...starts),
    phases,
    failures: [...groups.values()].sort((a, b) => b.count - a.count),
    retransmissions: PHASES.reduce((sum, name) => sum + phases[name].retransmissions, 0),
    tftpGranted,
    ...(result.clientEventLoop === undefined ? {} : { clientEventLoop: result.clientEventLoop }),
  };
}

/** Renders `s` as a few lines of text (one per phase, then failures). */
export function formatStormSummary(s: StormSummary, label = ''): string {
  const ms = (v: number): string => (v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(v >= 100 ? 0 : 1)} ms`);
  const lines = [`${label}${s.clients} clients: completion ${ms(s.completionMs)}, ${s.succeeded} booted, ${s.failed} failed, ${s.retransmissions} retransmissions`];
  for (const name of PHASES) {
    const p = s.phases[name];
    if (p.n === 0 && p.retransmissions === 0) continue;
    const mib = p.bytes > 0 ? `, ${(p.bytes / 1048576).toFixed(0)} MiB` : '';
    const granted = name === 'tftp' ? ` (${Object.entries(s.tftpGranted).map(([k, v]) => `${k}: ${v}`).join('; ')})` : '';
    lines.push(`  ${name.padEnd(6)} n ${String(p.n).padStart(4)}  p50 ${ms(p.p50Ms).padStart(9)}  p99 ${ms(p.p99Ms).padStart(9)}  max ${ms(p.maxMs).padStart(9)}  retx ${p.retransmissions}${mib}${granted}`);
  }
  if (s.clientEventLoop !== undefined) lines.push(`  simulator event loop p99 ${ms(s.clientEventLoop.p99Ms)}, max ${ms(s.clientEventLoop.maxMs)} (10 ms interval included)`);
  for (const f of s.failures) lines.push(`  FAILED ${f.count}× in ${f.phase}: ${f.reason} (e.g. ${f.example})`);
  return lines.join('\n');
}
