/**
 * @module A PXE storm inside this process: `clients` simulated firmware boots
 * ({@link simulateFirmwareBoot}) sharing one DHCP socket, started all at once or spread over
 * `rampMs`, each bounded by its own timeouts. Run it from a process that lives in the client
 * namespace (the CLI in cli.ts, via `ip netns exec`), or see spawn-storm.ts to run it there
 * from outside. Resolves when every client has ended; never rejects for a client's failure.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { openDhcpChannel } from './dhcp-channel.js';
import { clientMac } from './dhcp-messages.js';
import { simulateFirmwareBoot } from './firmware-boot.js';
import type { ClientResult, FirmwareArch, StormOptions, StormResult } from './types.js';

/** Limits on {@link StormOptions} (a client index must fit a 24-bit MAC suffix). */
export const STORM_LIMITS = { maxClients: 5000, minBlksize: 8, maxBlksize: 65464, maxWindowsize: 65535, maxRampMs: 600_000 } as const;

/** Throws a RangeError naming the first option out of range. */
export function checkStormOptions(o: StormOptions): void {
  const int = (name: string, v: number, min: number, max: number): void => {
    if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`${name} must be an integer ${min}…${max}, got ${v}`);
  };
  int('clients', o.clients, 1, STORM_LIMITS.maxClients);
  int('firstIndex', o.firstIndex ?? 0, 0, 0xfffffe - o.clients);
  int('blksize', o.blksize ?? 1468, STORM_LIMITS.minBlksize, STORM_LIMITS.maxBlksize);
  int('windowsize', o.windowsize ?? 4, 1, STORM_LIMITS.maxWindowsize);
  int('rampMs', o.rampMs ?? 0, 0, STORM_LIMITS.maxRampMs);
  clientMac(o.firstIndex ?? 0, o.macPrefix, o.macOrder); // throws for a bad prefix
}

/** The firmware of client `index` under `arch`. */
export function archOf(arch: StormOptions['arch'], index: number): FirmwareArch {
  if (arch === 'mixed') return index % 2 === 0 ? 'efi' : 'bios';
  return arch ?? 'efi';
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Runs the storm (see the module comment). Needs port 68 free in this namespace (root). */
export async function runStorm(o: StormOptions & { dhcpClientPort?: number; dhcpServerPort?: number }): Promise<StormResult> {
  checkStormOptions(o);
  const channel = await openDhcpChannel({
    ...(o.dhcpClientPort === undefined ? {} : { clientPort: o.dhcpClientPort }),
    ...(o.dhcpServerPort === undefined ? {} : { serverPort: o.dhcpServerPort }),
  });
  const first = o.firstIndex ?? 0;
  const rampMs = o.rampMs ?? 0;
  const startedMs = nowMs();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  try {
    const clients = await Promise.all(Array.from({ length: o.clients }, async (_, i): Promise<ClientResult> => {
      const delayMs = o.clients > 1 ? (i * rampMs) / o.clients : 0;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      const index = first + i;
      const result = await simulateFirmwareBoot(channel, {
        index,
        ...(o.macPrefix === undefined ? {} : { macPrefix: o.macPrefix }),
        ...(o.macOrder === undefined ? {} : { macOrder: o.macOrder }),
        arch: archOf(o.arch, index),
        blksize: o.blksize ?? 1468,
        windowsize: o.windowsize ?? 4,
        ...(o.timeouts === undefined ? {} : { timeouts: o.timeouts }),
        ...(o.expected === undefined ? {} : { expected: o.expected }),
        ...(o.lastPhase === undefined ? {} : { lastPhase: o.lastPhase }),
      });
      o.onClientDone?.(result);
      return result;
    }));
    loop.disable();
    return { startedMs, endedMs: nowMs(), clients, clientEventLoop: { p99Ms: loop.percentile(99) / 1e6, maxMs: loop.max / 1e6 } };
  } finally {
    loop.disable();
    await channel.close();
  }
}
