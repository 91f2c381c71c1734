/**
 * The rackside DHCPv6 server as a child process inside a lab namespace (a process cannot switch
 * namespaces itself): `ip netns exec NS node dist/test/integration/dhcp6-child.js CONFIG_JSON`.
 * It opens the agent's LevelDB store in `stateDir` and serves with the agent's DHCPv6 lease
 * store (`agent/boot/lease-store6.ts`) and an in-memory boot lookup (MAC → target, else
 * `defaultTarget`, else unknown).
 *
 * Protocol, one JSON object per line on stdout: `{"type":"ready"}`; `{"type":"event",…}` per
 * flight-recorder event; `{"type":"log",…}`; `{"type":"leases","leases":[…],"stats":…}` after a
 * `leases` line on stdin; `{"type":"stopped","stats":…}` after `stop` (or SIGTERM), then exit 0;
 * `{"type":"error","message":…}` and exit 1 when it cannot start.
 */
import { createInterface } from 'node:readline';
import { createLease6Store } from '../../agent/boot/lease-store6.js';
import { openStore } from '../../agent/store/index.js';
import { startDhcp6Server, type Dhcp6ServerOptions } from '../../bootsvc/dhcp6/dhcp6-server.js';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { startRouterAdvertiser, type RouterAdvertiser } from '../../bootsvc/ra/router-advertiser.js';

/** The child's configuration (argv[2], JSON). */
export interface Dhcp6ChildConfig {
  interface: string;
  serverAddress: string;
  /** One range per link (`subnet` = `ADDRESS/LENGTH`). */
  ranges: { subnet: string; first: string; last: string }[];
  stateDir: string;
  targets?: Record<string, BootTarget>;
  defaultTarget?: BootTarget;
  rapidCommit?: boolean;
  /** DNS servers (option 23). */
  dns?: string[];
  /** Binding lifetime (T1 is half of it). */
  leaseSeconds?: number;
  /** Report events on stdout (default true; off for benchmarks). */
  events?: boolean;
  /**
   * Send router advertisements on `interface` for the first range's subnet (`bootsvc/ra/`), every
   * 3–4 s; their counters appear in `stats.routerAdvertisements`.
   */
  routerAdvertisements?: { autonomous?: boolean; routerLifetimeSeconds?: number };
}

function print(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const config = JSON.parse(process.argv[2] ?? '{}') as Dhcp6ChildConfig;
const store = await openStore({ stateDir: config.stateDir });
const targets = new Map(Object.entries(config.targets ?? {}));
const options: Dhcp6ServerOptions = {
  mode: 'full', interface: config.interface, serverAddress: config.serverAddress, ranges: config.ranges,
  bootLookup: { target: (q) => Promise.resolve(targets.get(q.mac) ?? config.defaultTarget) },
  bootFiles: { httpBaseUrl: `http://[${config.serverAddress}]:8081` },
  leaseStore: createLease6Store(store.leases, (key, why) => { print({ type: 'log', level: 'warn', message: `bad lease ${key}: ${why}` }); }),
  log: (level, message, fields) => { print({ type: 'log', level, message, fields: fields === undefined ? undefined : JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? v.message : v)) }); },
  ...(config.rapidCommit === undefined ? {} : { rapidCommit: config.rapidCommit }),
  ...(config.leaseSeconds === undefined ? {} : { leaseSeconds: config.leaseSeconds }),
  ...(config.dns === undefined ? {} : { dns: config.dns }),
  ...(config.events === false ? {} : { onEvent: (event) => { print({ type: 'event', event }); } }),
};
let server: Awaited<ReturnType<typeof startDhcp6Server>>;
try {
  server = await startDhcp6Server(options);
} catch (err) {
  print({ type: 'error', message: err instanceof Error ? err.message : String(err), code: (err as { code?: unknown }).code });
  await store.close();
  process.exit(1);
}
let advertiser: RouterAdvertiser | undefined;
const ra = config.routerAdvertisements;
if (ra !== undefined) {
  const [address = '', length = '64'] = (config.ranges[0]?.subnet ?? '').split('/');
  advertiser = startRouterAdvertiser({
    interface: config.interface, prefix: { address, length: Number(length) }, intervals: { minMs: 3000, maxMs: 4000 },
    ...(ra.autonomous === undefined ? {} : { autonomous: ra.autonomous }),
    ...(ra.routerLifetimeSeconds === undefined ? {} : { routerLifetimeSeconds: ra.routerLifetimeSeconds }),
    log: (level, message) => { print({ type: 'log', level, message }); },
  });
}
const stats = (): Record<string, unknown> => ({ ...server.stats(), ...(advertiser === undefined ? {} : { routerAdvertisements: advertiser.stats() }) });
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await advertiser?.stop();
  await server.stop();
  await store.close();
  print({ type: 'stopped', stats: stats() });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'leases') print({ type: 'leases', leases: server.leases(), stats: stats() });
  if (line.trim() === 'stop') void stop();
});
print({ type: 'ready' });
