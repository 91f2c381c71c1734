/**
 * Runs rackside's TFTP server as its own process, so tests can put it inside a network
 * namespace (`ip netns exec NS node tftp-server-child.js CONFIG`) and the benchmark can run it
 * beside tftpd-hpa on equal terms. CONFIG is a JSON {@link TftpServerOptions} minus the
 * callbacks, plus `quiet: true` to print no per-transfer events.
 *
 * stdout, one JSON line each: `{"type":"listening","port":N}` first, then every flight-recorder
 * event (unless quiet). A line `read` on stdin prints `{"type":"read", cpuSeconds, lagMs}` —
 * CPU time and event-loop delay (monitorEventLoopDelay at 1 ms resolution, minus it) since the
 * previous `read` — and starts a new interval. On SIGTERM or SIGINT a `{"type":"stats",...}`
 * line, then it stops.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { startTftpServer, type TftpServerOptions } from '../../bootsvc/tftp/tftp-server.js';

type ChildConfig = Omit<TftpServerOptions, 'onEvent' | 'now' | 'resolve'> & { quiet?: boolean };

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
const print = (value: object): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};
const lag = monitorEventLoopDelay({ resolution: 1 });
lag.enable();
let cpuMark = process.cpuUsage();
const server = await startTftpServer({ ...config, ...(config.quiet === true ? {} : { onEvent: print }) });
print({ type: 'listening', host: server.address.host, port: server.address.port });

const lagMs = (): { p50: number; p99: number; max: number } => {
  const ms = (ns: number): number => Math.max(0, ns / 1e6 - 1);
  return { p50: ms(lag.percentile(50)), p99: ms(lag.percentile(99)), max: ms(lag.max) };
};

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'read') return;
  const cpu = process.cpuUsage(cpuMark);
  print({ type: 'read', cpuSeconds: (cpu.user + cpu.system) / 1e6, lagMs: lagMs() });
  cpuMark = process.cpuUsage();
  lag.reset();
});

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  print({ type: 'stats', ...server.stats(), lagMs: lagMs() });
  await server.stop();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
