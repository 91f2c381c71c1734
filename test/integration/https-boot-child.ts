/**
 * The boot services of the HTTPS boot test (https-boot-ovmf.test.ts) as a child process inside a
 * lab namespace: `ip netns exec NS node dist/test/integration/https-boot-child.js CONFIG_JSON`.
 * rackside's DHCPv4 server (full mode) with boot HTTPS on, and the boot HTTP server with its TLS
 * listener (the given certificate chain and key) serving `mounts`; an in-memory boot lookup
 * (MAC → target).
 *
 * Protocol, one JSON object per line on stdout: `{"type":"ready"}`; `{"type":"event",…}` per
 * DHCP and HTTP event; `{"type":"tls-error","message":…}` per failed TLS handshake;
 * `{"type":"error","message":…}` and exit 1 when it cannot start. SIGTERM stops it.
 */
import { readFileSync } from 'node:fs';
import { createLeaseStore } from '../../agent/boot/lease-store.js';
import { openStore } from '../../agent/store/index.js';
import { startDhcpServer } from '../../bootsvc/dhcp/dhcp-server.js';
import { startBootHttpServer } from '../../bootsvc/http/boot-http-server.js';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';

/** The child's configuration (argv[2], JSON). */
export interface HttpsBootChildConfig {
  interface: string;
  serverAddress: string;
  range: { subnet: string; first: string; last: string };
  stateDir: string;
  targets: Record<string, BootTarget>;
  mounts: Record<string, string>;
  /** PEM files of the server certificate chain and key. */
  certPath: string;
  keyPath: string;
}

function print(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const config = JSON.parse(process.argv[2] ?? '{}') as HttpsBootChildConfig;
const store = await openStore({ stateDir: config.stateDir });
const targets = new Map(Object.entries(config.targets));
const lookup = { target: (q: { mac: string }) => Promise.resolve(targets.get(q.mac)) };
const httpBaseUrl = `http://${config.serverAddress}:8081`;
const httpsBaseUrl = `https://${config.serverAddress}:8443`;
const logger = {
  warn: (fields: Record<string, unknown>, message: string): void => {
    const err = fields.err;
    if (message.includes('TLS handshake')) print({ type: 'tls-error', message: err instanceof Error ? err.message : String(err) });
    else print({ type: 'log', level: 'warn', message });
  },
  info: (): void => undefined,
  debug: (): void => undefined,
  error: (_fields: Record<string, unknown>, message: string): void => { print({ type: 'log', level: 'error', message }); },
};
try {
  const http = await startBootHttpServer({
    host: config.serverAddress, port: 8081, publicUrl: httpBaseUrl, plans: lookup, mounts: config.mounts,
    tls: { cert: readFileSync(config.certPath), key: readFileSync(config.keyPath), port: 8443, publicUrl: httpsBaseUrl },
    onEvent: (event) => { print({ type: 'event', event }); },
    logger,
  });
  const dhcp = await startDhcpServer({
    mode: 'full', interface: config.interface, serverAddress: config.serverAddress, ranges: [{ ...config.range, dns: [] }],
    bootLookup: lookup, bootFiles: { httpBaseUrl, httpsBaseUrl }, leaseStore: createLeaseStore(store.leases),
    onEvent: (event) => { print({ type: 'event', event }); },
  });
  process.once('SIGTERM', () => {
    void Promise.all([dhcp.stop(), http.stop()]).then(() => store.close()).then(() => { process.exit(0); });
  });
  print({ type: 'ready' });
} catch (err) {
  print({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  await store.close();
  process.exit(1);
}
