/**
 * @module Starts `dhcp-server-child.js` inside a lab namespace and talks to it: waits for
 * `ready`, collects its DHCP events and logs, asks for stats, stops it (SIGTERM → final stats).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DhcpServerStats } from '../../bootsvc/dhcp/server-events.js';
import type { DhcpBootEvent } from '../../bootsvc/events.js';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import type { DhcpChildConfig } from './dhcp-server-child.js';
import { waitFor, type LabProcess, type NetnsLab } from './netns.js';

/** The compiled child script. */
/** A host booting the ramdisk: BIOS clients get `undionly.kpxe`, UEFI x64 ones `ipxe.efi`, iPXE its script. */
export const RAMDISK_BOOT: BootTarget = { host: 'node-0', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://127.0.0.1:8081' } };

/** A provisioned host: booted from its disk, no boot file. */
export const LOCAL_DISK_BOOT: BootTarget = { host: 'node-0', plan: { kind: 'local-disk' } };

export const DHCP_SERVER_CHILD = join(dirname(fileURLToPath(import.meta.url)), 'dhcp-server-child.js');

/** A rackside DHCP server running in a namespace. */
export interface DhcpServerProcess {
  readonly process: LabProcess;
  /** DHCP events so far, oldest first. */
  events(): DhcpBootEvent[];
  /** `level: message` log lines so far. */
  logs(): string[];
  /** Current counters. */
  stats(): Promise<DhcpServerStats>;
  /** Waits for an event matching `match`. */
  waitForEvent(match: (e: DhcpBootEvent) => boolean, what: string, timeoutMs?: number): Promise<DhcpBootEvent>;
  /** SIGTERM; resolves with the final counters once the child stopped and closed its store. */
  stop(): Promise<DhcpServerStats>;
  /** Event-loop delay percentiles over the child's life (after `stop()`). */
  eventLoop(): EventLoopDelay | undefined;
}

/** Event-loop delay of the server child, in milliseconds. */
export interface EventLoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

interface ChildLine {
  type: string;
  event?: DhcpBootEvent;
  stats?: DhcpServerStats;
  level?: string;
  message?: string;
  fields?: string;
  eventLoop?: EventLoopDelay;
}

/** Starts the server child in `ns` and waits until it serves (rejects with its error or output otherwise). */
export async function startDhcpServerProcess(
  lab: NetnsLab,
  ns: string,
  config: DhcpChildConfig,
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv; /** Extra node flags, e.g. `--cpu-prof`. */ nodeArgs?: string[]; /** Another child script speaking the same protocol. */ script?: string } = {},
): Promise<DhcpServerProcess> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const child = lab.spawn(ns, process.execPath, [...(options.nodeArgs ?? []), options.script ?? DHCP_SERVER_CHILD, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  const events: DhcpBootEvent[] = [];
  const logs: string[] = [];
  const statsWaiters: ((s: DhcpServerStats) => void)[] = [];
  let ready = false;
  let error: string | undefined;
  let final: DhcpServerStats | undefined;
  let eventLoop: EventLoopDelay | undefined;
  let buffered = '';
  child.child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let parsed: ChildLine;
      try {
        parsed = JSON.parse(line) as ChildLine;
      } catch {
        logs.push(`stdout: ${line}`);
        continue;
      }
      if (parsed.type === 'ready') ready = true;
      else if (parsed.type === 'event' && parsed.event !== undefined) events.push(parsed.event);
      else if (parsed.type === 'log') logs.push(`${parsed.level ?? '?'}: ${parsed.message ?? ''}${parsed.fields === undefined ? '' : ` ${parsed.fields}`}`);
      else if (parsed.type === 'stats' && parsed.stats !== undefined) statsWaiters.shift()?.(parsed.stats);
      else if (parsed.type === 'stopped') {
        final = parsed.stats;
        eventLoop = parsed.eventLoop;
      }
      else if (parsed.type === 'error') error = parsed.message;
    }
  });
  await waitFor(() => ready || error !== undefined || child.child.exitCode !== null, 'the DHCP server child to start', timeoutMs);
  if (error !== undefined || child.child.exitCode !== null) {
    await child.stop();
    throw new Error(`DHCP server child failed: ${error ?? `exited; stderr: ${child.stderr()}`}`);
  }
  return {
    process: child,
    events: () => [...events],
    logs: () => [...logs],
    stats() {
      return new Promise((resolve) => {
        statsWaiters.push(resolve);
        child.child.stdin?.write('stats\n');
      });
    },
    eventLoop: () => eventLoop,
    waitForEvent(match, what, waitMs = 15_000) {
      return waitFor(() => events.find(match), what, waitMs);
    },
    async stop() {
      await child.stop('SIGTERM', 10_000);
      if (final === undefined) throw new Error(`DHCP server child did not report final stats; stderr: ${child.stderr()}`);
      return final;
    },
  };
}
