/**
 * Runs rackside's TFTP server as its own process, so tests can put it inside a network
 * namespace (`ip netns exec NS node tftp-server-child.js CONFIG`) and the benchmark can run it
 * beside tftpd-hpa on equal terms. CONFIG is a JSON {@link TftpServerOptions} minus the
 * callbacks. Prints one JSON line per event: first `{"type":"listening","port":N}`, then every
 * flight-recorder event; on SIGTERM or SIGINT a `{"type":"stats",...}` line, then it stops.
 */
import { startTftpServer, type TftpServerOptions } from '../../bootsvc/tftp/tftp-server.js';

type ChildConfig = Omit<TftpServerOptions, 'onEvent' | 'now' | 'resolve'>;

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
const print = (value: object): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};
const server = await startTftpServer({ ...config, onEvent: print });
print({ type: 'listening', host: server.address.host, port: server.address.port });

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  print({ type: 'stats', ...server.stats() });
  await server.stop();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
