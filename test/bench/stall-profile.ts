/**
 * @module What ran inside each event-loop stall: reads a `--cpu-prof` profile of the agent and
 * the stall log its loop-delay probe wrote beside it (loop-delay-probe.ts `stallLog`; both on
 * CLOCK_MONOTONIC, in µs), and prints per stall its length, the schedstat split when there is
 * one, and the functions the profiler sampled inside it, then the totals over every stall (self
 * and inclusive). A stall whose samples are few next to its length was mostly spent not running
 * (the profiler samples a running thread only). Not a test; a diagnostic for docs/PERFORMANCE.md.
 *
 * Usage: node dist/test/bench/stall-profile.js PROFILE.cpuprofile STALLS [--from S] [--to S] [--top 25]
 * (`--from`/`--to`: only stalls starting that many seconds after the profile's start, e.g. the
 * storm's window; `pxe-storm.bench.js --cpu-prof DIR` writes both files).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The parts of a V8 `.cpuprofile` (Chrome DevTools protocol `Profiler.Profile`) read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  /** µs, CLOCK_MONOTONIC on Linux. */
  startTime: number;
  samples: number[];
  /** µs between samples; the first is from `startTime`. */
  timeDeltas: number[];
}

/** One line of a stall log. */
export interface LoggedStall {
  /** µs, CLOCK_MONOTONIC. */
  startUs: number;
  endUs: number;
  gapMs: number;
  runningMs: number | undefined;
  runnableMs: number | undefined;
}

/** What the profiler saw inside one stall. */
export interface StallContents {
  stall: LoggedStall;
  samples: number;
  /** Self samples per frame label, most first. */
  self: [string, number][];
}

/** Parses a stall log (loop-delay-probe.ts): `<end µs> <gap ms> <running ms|-> <runnable ms|->` per line. */
export function parseStallLog(text: string): LoggedStall[] {
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => {
    const [end, gap, running, runnable] = line.trim().split(/\s+/);
    const endUs = Number(end);
    const gapMs = Number(gap);
    if (!Number.isFinite(endUs) || !Number.isFinite(gapMs)) throw new Error(`not a stall log line: ${line}`);
    const ms = (cell: string | undefined): number | undefined => (cell === undefined || cell === '-' ? undefined : Number(cell));
    return { startUs: endUs - gapMs * 1000, endUs, gapMs, runningMs: ms(running), runnableMs: ms(runnable) };
  });
}

const frameLabel = (frame: CpuProfile['nodes'][number]['callFrame']): string =>
  `${frame.functionName === '' ? '(anonymous)' : frame.functionName} ${frame.url.split('/').slice(-2).join('/')}:${String(frame.lineNumber + 1)}`;

/**
 * Per stall, the profile's samples inside it; and the totals over all stalls, self and inclusive
 * (a frame counted once per sample however deep it recurs). Pure.
 */
export function stallContents(profile: CpuProfile, stalls: readonly LoggedStall[]): { stalls: StallContents[]; self: [string, number][]; inclusive: [string, number][] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const times: number[] = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((t += delta));
  const totalSelf = new Map<string, number>();
  const totalInclusive = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string): void => {
    map.set(key, (map.get(key) ?? 0) + 1);
  };
  const sorted = (map: Map<string, number>): [string, number][] => [...map].sort((a, b) => b[1] - a[1]);
  const out = stalls.map((stall) => {
    const self = new Map<string, number>();
    let samples = 0;
    for (let i = 0; i < times.length; i++) {
      const at = times[i] ?? 0;
      const node = byId.get(profile.samples[i] ?? -1);
      if (at < stall.startUs || at > stall.endUs || node === undefined) continue;
      samples++;
      const label = frameLabel(node.callFrame);
      bump(self, label);
      bump(totalSelf, label);
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
        const frame = byId.get(id);
        if (frame === undefined) break;
        const name = frameLabel(frame.callFrame);
        if (!seen.has(name)) bump(totalInclusive, name);
        seen.add(name);
      }
    }
    return { stall, samples, self: sorted(self) };
  });
  return { stalls: out, self: sorted(totalSelf), inclusive: sorted(totalInclusive) };
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { from: { type: 'string' }, to: { type: 'string' }, top: { type: 'string', default: '25' } } });
  const [profilePath, stallPath] = positionals;
  if (profilePath === undefined || stallPath === undefined) throw new Error('usage: stall-profile.js PROFILE.cpuprofile STALLS [--from S] [--to S] [--top N]');
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const fromUs = profile.startTime + Number(values.from ?? '0') * 1e6;
  const toUs = values.to === undefined ? Infinity : profile.startTime + Number(values.to) * 1e6;
  const top = Number(values.top);
  const stalls = parseStallLog(readFileSync(stallPath, 'utf8')).filter((s) => s.startUs >= fromUs && s.startUs <= toUs);
  const result = stallContents(profile, stalls);
  const ms = (v: number | undefined): string => (v === undefined ? '-' : v.toFixed(1));
  for (const { stall, samples, self } of result.stalls) {
    const at = ((stall.startUs - profile.startTime) / 1e6).toFixed(3);
    const what = self.slice(0, 4).map(([label, n]) => `${String(n)}× ${label}`).join(' | ');
    console.log(`${at} s  stall ${stall.gapMs.toFixed(1)} ms (running ${ms(stall.runningMs)}, waiting for a CPU ${ms(stall.runnableMs)})  ${String(samples)} samples: ${what}`);
  }
  const count = result.self.reduce((sum, [, n]) => sum + n, 0);
  console.log(`\n${String(result.stalls.length)} stalls, ${String(count)} samples inside them; self:`);
  for (const [label, n] of result.self.slice(0, top)) console.log(`${String(n).padStart(6)}  ${label}`);
  console.log('inclusive:');
  for (const [label, n] of result.inclusive.slice(0, top)) console.log(`${String(n).padStart(6)}  ${label}`);
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) main();
