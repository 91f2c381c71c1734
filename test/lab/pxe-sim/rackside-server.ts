/**
 * @module rackside as a storm's boot server: the real agent (`node dist/agent/cli.js agent`) in
 * the server namespace with the `local` provisioner, DHCP `full` on `eth0`, TFTP and boot HTTP
 * on 10.88.0.1, the storm's files as its first stage (`<stateDir>/boot-assets/ipxe.efi` and
 * `undionly.kpxe`) and ramdisk (`<cacheDir>/ramdisk/vmlinuz`, `initrd`). By default unknown MACs
 * get no answer (`dhcp.unknownHosts: ignore`; `unknownHosts: discover` serves them the discovery
 * ramdisk, docs/discovery.md), so the storm's path is the real one: every client is a BareMetalHost (bootMACAddress = the
 * client's MAC) with a Redfish BMC, applied through the API and inspected by the agent, which
 * sets a one-time PXE boot and powers the host on through its BMC, then waits in `inspecting`
 * for the ramdisk — while waiting it serves that host the ramdisk script. The BMCs are the
 * scale bench's light emulator (test/bench/scale/bmc-emulator.ts, one process in the server
 * namespace, 5 ms per answer). `reconcile.provisioningLimit` is raised to the client count
 * (default 20 would keep all but 20 hosts from inspecting); everything else is the default
 * config, including the 60 s BMC power sweep. The management API listens on the namespace's
 * loopback and is published to this process through a unix-socket relay (test/lab/rack/relay.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor, type LabProcess, type NetnsLab } from '../../helpers/netns.js';
import { startRelay, type Relay } from '../rack/relay.js';
import { processCpuSeconds, type BootServer } from './boot-server.js';
import { clientMac, type MacOrder } from './dhcp-messages.js';
import { linkFile, STORM_NETWORK, type BootFiles } from './storm-lab.js';
import { atUnitNice } from '../../helpers/unit-nice.js';
import { agentChildEnv } from '../../helpers/integration.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT_CLI = resolve(HERE, '../../../agent/cli.js');
const BMC_EMULATOR = resolve(HERE, '../../bench/scale/bmc-emulator.js');
const RELAY = resolve(HERE, '../rack/relay.js');
/** The agent's management API port inside the server namespace (127.0.0.1 there). */
export const STORM_MANAGEMENT_PORT = 18080;
const APPLY_BATCH = 100;

/** Options of {@link startRacksideServer}. */
export interface RacksideServerOptions {
  lab: NetnsLab;
  ns: string;
  /** A fresh directory for this server (state, cache, config, sockets). */
  dir: string;
  files: BootFiles;
  /** The clients to register as hosts: MACs `clientMac(firstIndex … firstIndex + count − 1, macPrefix, macOrder)` (as the storm's). */
  hosts: { count: number; firstIndex?: number; macPrefix?: string; macOrder?: MacOrder };
  /** Extra top-level YAML appended to the config (sections the defaults do not set). */
  extraConfig?: string;
  /** `dhcp.unknownHosts` (default `ignore`). */
  unknownHosts?: 'ignore' | 'discover';
  /** Node flags for the agent (e.g. `--cpu-prof`). */
  nodeArgs?: readonly string[];
  /** Bound on registration (apply → every host inspecting); default 60 s + 200 ms per host. */
  registerTimeoutMs?: number;
}

/** The running agent. */
export interface RacksideServer extends BootServer {
  /** Management API as reachable from this process (through the relay). */
  readonly managementUrl: string;
  readonly agentPid: number;
  /** `GET /metrics` (each call also resets prom-client's event-loop histogram). */
  metrics(): Promise<string>;
  /** `GET /api/v1/status`: the status page's report (its `bootServices` say e.g. how many TFTP requests were dropped at the transfer limit). */
  status(): Promise<unknown>;
  /** The agent's output so far (last MiB). */
  output(): string;
}

/** The value of metric `name` (no labels) in a Prometheus text exposition, or undefined. */
export function metricValue(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

function agentConfig(dir: string, hosts: number, extra: string, unknownHosts: 'ignore' | 'discover'): string {
  const n = STORM_NETWORK;
  return [
    'agent:', '  id: pxe-storm', `  stateDir: ${join(dir, 'state')}`,
    'provisioner: local',
    'management:', `  listen: 127.0.0.1:${STORM_MANAGEMENT_PORT}`,
    'provisioning:', '  interface: eth0', `  address: ${n.serverAddress}/${n.prefixLength}`,
    'dhcp:', '  mode: full', `  range: ${n.poolFirst}-${n.poolLast}`, `  unknownHosts: ${unknownHosts}`,
    'http:', `  listen: ${n.serverAddress}:${n.httpPort}`,
    'tftp:', `  listen: ${n.serverAddress}:69`,
    'images:', `  cacheDir: ${join(dir, 'cache')}`,
    'reconcile:', `  provisioningLimit: ${Math.max(20, hosts)}`,
    'log:', '  level: info',
    extra, '',
  ].join('\n');
}

async function waitForLine(p: LabProcess, pattern: RegExp, what: string, timeoutMs: number): Promise<string> {
  return waitFor(() => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`${what} exited: ${p.stdout().slice(-2000)}${p.stderr().slice(-2000)}`);
    return pattern.exec(p.stdout())?.[0];
  }, what, timeoutMs, 50);
}

async function call(url: string, method = 'GET', body?: unknown): Promise<string> {
  const res = await fetch(url, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${text.slice(0, 500)}`);
  return text;
}

/** Applies the hosts and waits until every one is `inspecting` (see the module comment). */
async function registerHosts(managementUrl: string, emulatorPorts: readonly number[], o: RacksideServerOptions): Promise<void> {
  const { count, firstIndex = 0, macPrefix, macOrder } = o.hosts;
  if (count === 0) return;
  const secret = {
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'storm-bmc', namespace: 'default' }, type: 'Opaque',
    data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('password').toString('base64') },
  };
  const host = (i: number): unknown => {
    const bmc = i + 1; // the emulator's BMCs are 1…count
    const port = emulatorPorts[(bmc - 1) % emulatorPorts.length] ?? 0;
    return {
      apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost',
      metadata: { name: `storm-${String(firstIndex + i).padStart(4, '0')}`, namespace: 'default' },
      spec: {
        online: true, bootMACAddress: clientMac(firstIndex + i, macPrefix, macOrder), bootMode: 'UEFI',
        bmc: { address: `redfish+http://127.0.0.1:${port}/redfish/v1/Systems/${bmc}`, credentialsName: 'storm-bmc' },
      },
    };
  };
  await call(`${managementUrl}/api/v1/apply`, 'POST', [secret]);
  for (let first = 0; first < count; first += APPLY_BATCH) {
    await call(`${managementUrl}/api/v1/apply`, 'POST', Array.from({ length: Math.min(APPLY_BATCH, count - first) }, (_, k) => host(first + k)));
  }
  let last = '';
  await waitFor(async () => {
    const list = JSON.parse(await call(`${managementUrl}/api/v1/hosts`)) as { items: { status: { provisioning: { state: string }; errorMessage?: string } }[] };
    const states = new Map<string, number>();
    for (const h of list.items) {
      const key = h.status.errorMessage ? `${h.status.provisioning.state} (error: ${h.status.errorMessage.slice(0, 120)})` : h.status.provisioning.state;
      states.set(key, (states.get(key) ?? 0) + 1);
    }
    last = JSON.stringify([...states]);
    return states.get('inspecting') === count;
  }, `${count} hosts in inspecting (last: ${last})`, o.registerTimeoutMs ?? 60_000 + 200 * count, 1000).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; states ${last}`);
  });
}

/** Starts the agent, its BMCs and the relay, registers the hosts; stops what it started on failure. */
export async function startRacksideServer(o: RacksideServerOptions): Promise<RacksideServer> {
  const { lab, ns, dir, files } = o;
  const stops: (() => Promise<unknown>)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const assets = join(dir, 'state', 'boot-assets');
    for (const name of ['ipxe.efi', 'snponly.efi', 'undionly.kpxe']) await linkFile(files.firstStage, join(assets, name));
    await linkFile(files.kernel, join(dir, 'cache', 'ramdisk', 'vmlinuz'));
    await linkFile(files.initrd, join(dir, 'cache', 'ramdisk', 'initrd'));
    const emulator = lab.spawn(ns, process.execPath, [BMC_EMULATOR, '--bmcs', String(Math.max(1, o.hosts.count)), '--latency-ms', '5', '--jitter', '0.5'], { stdio: ['pipe', 'pipe', 'pipe'] });
    stops.push(() => emulator.stop());
    const hello = JSON.parse(await waitForLine(emulator, /^\{.*\}$/m, 'the BMC emulator', 20_000)) as { ports: number[] };
    const configPath = join(dir, 'rackside.yaml');
    await mkdir(dir, { recursive: true });
    await writeFile(configPath, agentConfig(dir, o.hosts.count, o.extraConfig ?? '', o.unknownHosts ?? 'ignore'));
    // At the shipped unit's Nice= (its event loop five levels up), as a head node runs it.
    const agent = lab.spawn(ns, ...atUnitNice(process.execPath, [...(o.nodeArgs ?? []), AGENT_CLI, 'agent', '--config', configPath]), { env: agentChildEnv() });
    stops.push(() => agent.stop('SIGTERM', 10_000));
    await waitForLine(agent, /rackside agent ready/, 'the rackside agent', 60_000);
    const socket = join(dir, 'management.sock');
    const nsRelay = lab.spawn(ns, process.execPath, [RELAY, `unix:${socket}=tcp:127.0.0.1:${STORM_MANAGEMENT_PORT}`], { stdio: ['pipe', 'pipe', 'pipe'] });
    stops.push(() => nsRelay.stop());
    await waitForLine(nsRelay, /relay ready/, 'the management relay', 10_000);
    const relay: Relay = await startRelay({ listen: { kind: 'tcp', host: '127.0.0.1', port: 0 }, target: { kind: 'unix', path: socket } });
    stops.push(() => relay.close());
    const managementUrl = `http://127.0.0.1:${String(relay.port)}`;
    await registerHosts(managementUrl, hello.ports, o);
    return {
      name: 'rackside',
      description: `rackside agent pid ${agent.pid} (local provisioner, DHCP full + TFTP + boot HTTP on ${STORM_NETWORK.serverAddress}, ${o.hosts.count} hosts inspecting)`,
      managementUrl,
      agentPid: agent.pid,
      cpuSeconds: () => processCpuSeconds(agent.pid),
      metrics: () => call(`${managementUrl}/metrics`),
      status: async () => JSON.parse(await call(`${managementUrl}/api/v1/status`)) as unknown,
      output: () => agent.stdout() + agent.stderr(),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
