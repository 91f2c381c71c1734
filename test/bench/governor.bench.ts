/**
 * @module The boot governor, measured (issue #11; not a test: no assertions). Usage, as root:
 * node dist/test/bench/governor.bench.js [--hosts 40] [--modes off,on] [--http-mbps 400]
 * [--dhcp-per-second 6] [--kernel-mib 8] [--initrd-mib 24] [--image-mib 32] [--timeout-s 900]
 * Modes: `off` (no governor), `on` (both budgets), `http` or `dhcp` (that budget alone).
 *
 * HOSTS hosts are provisioned at once by the real agent (`local` provisioner, DHCP full, TFTP,
 * boot HTTP on 10.88.0.1 in the PXE-storm lab's server namespace, test/lab/pxe-sim/storm-lab.ts),
 * once per mode: `off` (no `governor` section) and `on` (`governor.httpMbps`,
 * `governor.dhcpPerSecond`). Their BMCs are one virtual Redfish BMC in the client namespace
 * (governor/rack-child.ts), whose hosts network-boot through the PXE simulator when the agent
 * powers them on with a one-time PXE boot — DHCP, TFTP, iPXE DHCP, HTTP script, kernel, initrd
 * — then act as the rackside ramdisk: their own DHCP lease, heartbeats, the deploy's image
 * streamed from boot HTTP, an ok result. Every host is applied with an image (the rack child
 * serves it; the agent caches it once), `automatedCleaningMode: disabled` and inspection
 * disabled, so each provisioning is exactly one network boot: kernel + initrd + image over
 * boot HTTP and three DHCP leases. `reconcile.provisioningLimit` is the host count.
 *
 * Recorded per mode: when each host was powered on into PXE (at its BMC), the bytes reaching
 * the rack over the wire (the client namespace's eth0 receive counter, every 100 ms: boot HTTP
 * plus TFTP, DHCP and BMC requests) and the DHCP packets the clients sent; printed: the
 * power-on spread and gaps, the peak over any 1 s of wire bytes and of DHCP exchanges (client
 * DISCOVER + REQUEST pairs) against the configured budgets, mean rates, time to all
 * provisioned, failures, load average.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { missingPrerequisites, waitFor, type LabProcess } from '../helpers/netns.js';
import { clientMac, openStormLab, STORM_NETWORK, type StormLab } from '../lab/pxe-sim/index.js';
import { linkFile } from '../lab/pxe-sim/storm-lab.js';
import { startRelay } from '../lab/rack/relay.js';
import { agentChildEnv } from '../helpers/integration.js';

const { values: flags } = parseArgs({
  options: {
    hosts: { type: 'string', default: '40' },
    modes: { type: 'string', default: 'off,on' },
    'http-mbps': { type: 'string', default: '400' },
    'dhcp-per-second': { type: 'string', default: '6' },
    'kernel-mib': { type: 'string', default: '8' },
    'initrd-mib': { type: 'string', default: '24' },
    'image-mib': { type: 'string', default: '32' },
    'timeout-s': { type: 'string', default: '900' },
  },
});

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT_CLI = join(HERE, '../../agent/cli.js');
const RACK_CHILD = join(HERE, 'governor/rack-child.js');
const RELAY = join(HERE, '../lab/rack/relay.js');
const BMC_HOST = '10.88.200.1';
const MANAGEMENT_PORT = 18080;
const HOSTS = Number(flags.hosts);
const MIB = 2 ** 20;
const HTTP_MBPS = Number(flags['http-mbps']);
const DHCP_PER_SECOND = Number(flags['dhcp-per-second']);

const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface RackDump {
  powerOns: { system: string; atMs: number; target: string }[];
  /** Event-loop delay of the BMC process and of the clients process. */
  eventLoop: { bmc: { p99Ms: number; maxMs: number }; clients: { p99Ms: number; maxMs: number }; agent: { p99Ms: number; maxMs: number } };
  boots: {
    system: string; mac: string; startedMs: number;
    firmware?: { failure?: { phase: string; reason: string }; phases: Partial<Record<'dhcp1' | 'dhcp2' | 'kernel' | 'initrd', { startMs: number; endMs: number; bytes?: number }>> };
    ramdisk: { failure?: string; imageBytes?: number; imageStartMs?: number; imageEndMs?: number; resultMs?: number; dhcpStartMs?: number };
  }[];
  samples: { atMs: number; rxBytes: number; dhcpSent: number; dhcpReceived: number }[];
}

/** What one mode measured. */
interface ModeFigures {
  mode: string;
  provisioned: number;
  applyToAllMs: number | undefined;
  powerOnSpanMs: number;
  gapMinMs: number;
  gapMedianMs: number;
  /** Bytes into the rack over any 1 s, and over any 5 s, per second. */
  peakWireBytesPerSecond: number;
  peak5sWireBytesPerSecond: number;
  meanWireBytesPerSecond: number;
  /** Most DHCP exchanges power-ons cause (firmware and iPXE DORAs) in any 1 s, and in any 5 s per second. */
  peakDhcpExchangesPerSecond: number;
  peak5sDhcpExchangesPerSecond: number;
  meanDhcpExchangesPerSecond: number;
  /** Most DHCP exchanges with the ramdisk's own leases in any 1 s. */
  peakAllDhcpExchangesPerSecond: number;
  /** Most DHCP packets the clients sent (DISCOVER, REQUEST, retransmissions included) over any 1 s. */
  peakDhcpPacketsPerSecond: number;
  /** DHCP messages the agent's server received (its counter, sampled every 250 ms): peak over any 1 s and any 5 s, per second. */
  serverDhcp: { peak1s: number; peak5s: number };
  eventLoop: RackDump['eventLoop'];
  failures: string[];
  load: string;
}

async function call(url: string, method = 'GET', body?: unknown): Promise<string> {
  const res = await fetch(url, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} answered ${String(res.status)}: ${text.slice(0, 500)}`);
  return text;
}

/** Modes: `off` (no governor), `on` (both budgets), `http` or `dhcp` (that budget alone). */
const governsHttp = (mode: string): boolean => mode === 'on' || mode === 'http';
const governsDhcp = (mode: string): boolean => mode === 'on' || mode === 'dhcp';

function agentConfig(dir: string, mode: string): string {
  const n = STORM_NETWORK;
  return [
    'agent:', '  id: governor-bench', `  stateDir: ${join(dir, 'state')}`,
    'provisioner: local',
    'management:', `  listen: 127.0.0.1:${String(MANAGEMENT_PORT)}`,
    'provisioning:', '  interface: eth0', `  address: ${n.serverAddress}/${String(n.prefixLength)}`,
    'dhcp:', '  mode: full', `  range: ${n.poolFirst}-${n.poolLast}`,
    'http:', `  listen: ${n.serverAddress}:${String(n.httpPort)}`,
    'tftp:', `  listen: ${n.serverAddress}:69`,
    'images:', `  cacheDir: ${join(dir, 'cache')}`,
    'reconcile:', `  provisioningLimit: ${String(Math.max(20, HOSTS))}`,
    ...(mode === 'off' ? [] : ['governor:']),
    ...(governsHttp(mode) ? [`  httpMbps: ${String(HTTP_MBPS)}`] : []),
    ...(governsDhcp(mode) ? [`  dhcpPerSecond: ${String(DHCP_PER_SECOND)}`] : []),
    'log:', '  level: info',
    '',
  ].join('\n');
}

/**
 * The highest rate of a cumulative counter over any window of at least `windowMs` (samples
 * every ~100 ms): each sample ends a window that starts at the latest sample at least
 * `windowMs` before it, so a rate is never inflated by a window shorter than asked.
 */
function peakRate(samples: { atMs: number; value: number }[], windowMs: number): number {
  let best = 0;
  let j = 0;
  for (let i = 0; i < samples.length; i++) {
    const end = samples[i];
    if (end === undefined) continue;
    while (j + 1 < i && end.atMs - (samples[j + 1]?.atMs ?? end.atMs) >= windowMs) j++;
    const start = samples[j];
    if (start === undefined || end.atMs - start.atMs < windowMs) continue;
    best = Math.max(best, ((end.value - start.value) * 1000) / (end.atMs - start.atMs));
  }
  return best;
}

/** The most of `times` (ms) inside any window [t, t + windowMs). */
function peakCount(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while ((sorted[i] ?? 0) - (sorted[j] ?? 0) >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function startAgentIn(storm: StormLab, dir: string, mode: string, stops: (() => Promise<unknown>)[]): Promise<string> {
  const { lab, serverNs, files } = storm;
  const assets = join(dir, 'state', 'boot-assets');
  for (const name of ['ipxe.efi', 'snponly.efi', 'undionly.kpxe']) await linkFile(files.firstStage, join(assets, name));
  await linkFile(files.kernel, join(dir, 'cache', 'ramdisk', 'vmlinuz'));
  await linkFile(files.initrd, join(dir, 'cache', 'ramdisk', 'initrd'));
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(configPath, agentConfig(dir, mode));
  const agent = lab.spawn(serverNs, process.execPath, [AGENT_CLI, 'agent', '--config', configPath], { env: agentChildEnv() });
  stops.push(() => agent.stop('SIGTERM', 10_000));
  await waitForLine(agent, /rackside agent ready/, 'the agent', 60_000);
  const socket = join(dir, 'management.sock');
  const nsRelay = lab.spawn(serverNs, process.execPath, [RELAY, `unix:${socket}=tcp:127.0.0.1:${String(MANAGEMENT_PORT)}`], { stdio: ['pipe', 'pipe', 'pipe'] });
  stops.push(() => nsRelay.stop());
  await waitForLine(nsRelay, /relay ready/, 'the management relay', 10_000);
  const relay = await startRelay({ listen: { kind: 'tcp', host: '127.0.0.1', port: 0 }, target: { kind: 'unix', path: socket } });
  stops.push(() => relay.close());
  return `http://127.0.0.1:${String(relay.port)}`;
}

async function waitForLine(p: LabProcess, pattern: RegExp, what: string, timeoutMs: number): Promise<string> {
  return waitFor(() => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`${what} exited: ${p.stdout().slice(-2000)}${p.stderr().slice(-2000)}`);
    return pattern.exec(p.stdout())?.[0];
  }, what, timeoutMs, 50);
}

function manifests(hello: { bmcPort: number; imageUrl: string }): unknown[] {
  const secret = {
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gov-bmc', namespace: 'default' }, type: 'Opaque',
    data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('password').toString('base64') },
  };
  const hosts = Array.from({ length: HOSTS }, (_, i) => ({
    apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost',
    metadata: { name: `gov-${String(i + 1).padStart(3, '0')}`, namespace: 'default', annotations: { 'inspect.metal3.io': 'disabled' } },
    spec: {
      online: true, bootMACAddress: clientMac(i), bootMode: 'UEFI', automatedCleaningMode: 'disabled',
      bmc: { address: `redfish+http://${BMC_HOST}:${String(hello.bmcPort)}/redfish/v1/Systems/${String(i + 1)}`, credentialsName: 'gov-bmc' },
      image: { url: hello.imageUrl, checksum: `${hello.imageUrl}.sha256sum`, checksumType: 'sha256', format: 'raw' },
      rootDeviceHints: { deviceName: '/dev/vda' },
    },
  }));
  return [secret, ...hosts];
}

async function runMode(storm: StormLab, mode: string): Promise<ModeFigures> {
  const dir = join(storm.dir, `mode-${mode}`);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const stops: (() => Promise<unknown>)[] = [];
  const socket = join(dir, 'boots.sock');
  const outs = { clients: join(dir, 'clients.json'), bmc: join(dir, 'bmc.json') };
  const clients = storm.lab.spawn(storm.clientNs, process.execPath, [RACK_CHILD, '--role', 'clients', '--socket', socket, '--out', outs.clients]);
  let rackStopped = false;
  stops.push(() => (rackStopped ? Promise.resolve() : clients.stop('SIGTERM', 10_000)));
  try {
    await waitForLine(clients, /^\{.*\}$/m, 'the simulated clients', 30_000);
    const bmc = storm.lab.spawn(storm.clientNs, process.execPath, [
      RACK_CHILD, '--role', 'bmc', '--socket', socket, '--systems', String(HOSTS), '--bmc-host', BMC_HOST, '--image-bytes', String(Number(flags['image-mib']) * MIB), '--out', outs.bmc,
    ]);
    stops.push(() => (rackStopped ? Promise.resolve() : bmc.stop('SIGTERM', 10_000)));
    const hello = JSON.parse(await waitForLine(bmc, /^\{.*\}$/m, 'the BMC', 30_000)) as { bmcPort: number; imageUrl: string };
    const api = await startAgentIn(storm, dir, mode, stops);
    const t0 = Date.now();
    await call(`${api}/api/v1/apply`, 'POST', manifests(hello));
    console.log(`${mode}: applied ${String(HOSTS)} hosts (load ${load()})`);
    let doneAt: number | undefined;
    let provisioned = 0;
    const serverDhcp: { atMs: number; value: number }[] = [];
    let agentLoopMaxMs = 0;
    let agentLoopP99Ms = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const text = await call(`${api}/metrics`).catch(() => '');
        let received = 0;
        for (const m of text.matchAll(/^rackside_dhcp_received_total\{[^}]*\} ([0-9.e+]+)$/gm)) received += Number(m[1]);
        if (text !== '') serverDhcp.push({ atMs: Date.now(), value: received });
        // Each scrape resets prom-client's event-loop histogram: these are per 250 ms.
        agentLoopMaxMs = Math.max(agentLoopMaxMs, 1000 * Number(/^nodejs_eventloop_lag_max_seconds ([0-9.e+-]+)$/m.exec(text)?.[1] ?? 0));
        agentLoopP99Ms = Math.max(agentLoopP99Ms, 1000 * Number(/^nodejs_eventloop_lag_p99_seconds ([0-9.e+-]+)$/m.exec(text)?.[1] ?? 0));
        await sleep(250);
      }
    })();
    const deadline = t0 + Number(flags['timeout-s']) * 1000;
    let lastSummary = '';
    while (Date.now() < deadline) {
      const list = JSON.parse(await call(`${api}/api/v1/hosts`)) as { items: { status: { provisioning: { state: string }; errorMessage?: string } }[] };
      const counts = new Map<string, number>();
      for (const h of list.items) {
        const key = (h.status.errorMessage ?? '') === '' ? h.status.provisioning.state : `${h.status.provisioning.state} (error)`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      provisioned = counts.get('provisioned') ?? 0;
      const summary = [...counts].map(([k, v]) => `${k} ${String(v)}`).join(', ');
      if (summary !== lastSummary) console.log(`  ${((Date.now() - t0) / 1000).toFixed(1)} s: ${summary} (load ${load()})`);
      lastSummary = summary;
      if (provisioned === HOSTS) {
        doneAt = Date.now();
        break;
      }
      await sleep(1000);
    }
    sampling = false;
    await sampler;
    await Promise.all([bmc.stop('SIGTERM', 10_000), clients.stop('SIGTERM', 10_000)]);
    rackStopped = true;
    type Part = Record<string, unknown> & { eventLoop: { p99Ms: number; maxMs: number } };
    const [c, b] = await Promise.all([readFile(outs.clients, 'utf8'), readFile(outs.bmc, 'utf8')]).then((texts) => texts.map((t) => JSON.parse(t) as Part));
    const dump = {
      ...c, ...b,
      eventLoop: { bmc: b?.eventLoop ?? { p99Ms: 0, maxMs: 0 }, clients: c?.eventLoop ?? { p99Ms: 0, maxMs: 0 }, agent: { p99Ms: agentLoopP99Ms, maxMs: agentLoopMaxMs } },
    } as unknown as RackDump;
    const boot = serverDhcp.filter((x) => x.atMs >= (dump.powerOns[0]?.atMs ?? 0) - 1000);
    return { ...figures(mode, dump, provisioned, doneAt === undefined ? undefined : doneAt - t0), serverDhcp: { peak1s: peakRate(boot, 1000), peak5s: peakRate(boot, 5000) } };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

function figures(mode: string, dump: RackDump, provisioned: number, applyToAllMs: number | undefined): Omit<ModeFigures, 'serverDhcp'> {
  const first = new Map<string, number>();
  for (const p of dump.powerOns) if (p.target === 'Pxe' && !first.has(p.system)) first.set(p.system, p.atMs);
  const times = [...first.values()].sort((a, b) => a - b);
  const gaps = times.slice(1).map((t, i) => t - (times[i] ?? t));
  // The boot phase: from the first PXE power-on to the last deploy result.
  const end = Math.max(...dump.boots.map((b) => b.ramdisk.resultMs ?? 0), times.at(-1) ?? 0);
  const inBoot = dump.samples.filter((s) => s.atMs >= (times[0] ?? 0) - 1000 && s.atMs <= end + 1000);
  const wire = inBoot.map((s) => ({ atMs: s.atMs, value: s.rxBytes }));
  const dhcpPackets = inBoot.map((s) => ({ atMs: s.atMs, value: s.dhcpSent }));
  const defined = (t: number | undefined): t is number => t !== undefined;
  const exchanges = dump.boots.flatMap((b) => [b.firmware?.phases.dhcp1?.startMs, b.firmware?.phases.dhcp2?.startMs]).filter(defined);
  const allExchanges = [...exchanges, ...dump.boots.map((b) => b.ramdisk.dhcpStartMs).filter(defined)];
  const span = (inBoot.at(-1)?.atMs ?? 0) - (inBoot[0]?.atMs ?? 0);
  const mean = (series: { value: number }[]): number => (span > 0 ? (((series.at(-1)?.value ?? 0) - (series[0]?.value ?? 0)) * 1000) / span : 0);
  const failures = dump.boots.flatMap((b) => [
    ...(b.firmware?.failure === undefined ? [] : [`${b.mac} ${b.firmware.failure.phase}: ${b.firmware.failure.reason}`]),
    ...(b.ramdisk.failure === undefined ? [] : [`${b.mac} ramdisk: ${b.ramdisk.failure}`]),
  ]);
  return {
    mode, provisioned, applyToAllMs,
    powerOnSpanMs: (times.at(-1) ?? 0) - (times[0] ?? 0), gapMinMs: Math.min(...gaps), gapMedianMs: median(gaps),
    peakWireBytesPerSecond: peakRate(wire, 1000), meanWireBytesPerSecond: mean(wire),
    peak5sWireBytesPerSecond: peakRate(wire, 5000),
    peakDhcpExchangesPerSecond: peakCount(exchanges, 1000), peak5sDhcpExchangesPerSecond: peakCount(exchanges, 5000) / 5,
    meanDhcpExchangesPerSecond: span > 0 ? (exchanges.length * 1000) / span : 0, peakAllDhcpExchangesPerSecond: peakCount(allExchanges, 1000),
    peakDhcpPacketsPerSecond: peakRate(dhcpPackets, 1000),
    failures, load: load(), eventLoop: dump.eventLoop,
  };
}

function print(results: ModeFigures[]): void {
  const mbit = (bytesPerSecond: number): string => `${((bytesPerSecond * 8) / 1e6).toFixed(0)} Mbit/s`;
  console.log(`\n${String(HOSTS)} hosts provisioned at once; per host: kernel ${flags['kernel-mib']} MiB + initrd ${flags['initrd-mib']} MiB + image ${flags['image-mib']} MiB over boot HTTP, 1 MiB first stage over TFTP, 3 DHCP leases (2 at power-on, the ramdisk's after its downloads); (N×) = share of the budget`);
  console.log(`budgets: httpMbps ${String(HTTP_MBPS)} (modes on, http), dhcpPerSecond ${String(DHCP_PER_SECOND)} (modes on, dhcp)\n`);
  console.log('| mode | provisioned | apply → all provisioned | PXE power-ons: first → last, gap min / median | into the rack: peak 1 s / peak 5 s / mean | power-on DHCP exchanges/s: peak 1 s / peak 5 s / mean | with the ramdisk leases: peak 1 s | DHCP client packets: peak 1 s | failures | load after |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const http = (bytesPerSecond: number): string => `${mbit(bytesPerSecond)}${governsHttp(r.mode) ? ` (${((bytesPerSecond * 8) / 1e6 / HTTP_MBPS).toFixed(2)}×)` : ''}`;
    const dhcp = (perSecond: number): string => `${perSecond.toFixed(1)}${governsDhcp(r.mode) ? ` (${(perSecond / DHCP_PER_SECOND).toFixed(2)}×)` : ''}`;
    console.log(`| ${r.mode} | ${String(r.provisioned)}/${String(HOSTS)} | ${r.applyToAllMs === undefined ? 'not all' : `${(r.applyToAllMs / 1000).toFixed(1)} s`} | ` +
      `${(r.powerOnSpanMs / 1000).toFixed(1)} s, ${(r.gapMinMs / 1000).toFixed(2)} / ${(r.gapMedianMs / 1000).toFixed(2)} s | ` +
      `${http(r.peakWireBytesPerSecond)} / ${http(r.peak5sWireBytesPerSecond)} / ${http(r.meanWireBytesPerSecond)} | ` +
      `${dhcp(r.peakDhcpExchangesPerSecond)} / ${dhcp(r.peak5sDhcpExchangesPerSecond)} / ${r.meanDhcpExchangesPerSecond.toFixed(1)} | ${String(r.peakAllDhcpExchangesPerSecond)} | ${r.peakDhcpPacketsPerSecond.toFixed(1)} | ` +
      `${String(r.failures.length)} | ${r.load} |`);
  }
  for (const r of results) {
    console.log(`  ${r.mode}: DHCP messages the server received, peak 1 s / 5 s: ${r.serverDhcp.peak1s.toFixed(1)} / ${r.serverDhcp.peak5s.toFixed(1)} per s; ` +
      `event-loop delay p99 / max: agent ${r.eventLoop.agent.p99Ms.toFixed(0)} / ${r.eventLoop.agent.maxMs.toFixed(0)} ms (worst 250 ms scrape), BMC ${r.eventLoop.bmc.p99Ms.toFixed(0)} / ${r.eventLoop.bmc.maxMs.toFixed(0)} ms, clients ${r.eventLoop.clients.p99Ms.toFixed(0)} / ${r.eventLoop.clients.maxMs.toFixed(0)} ms`);
    for (const f of r.failures.slice(0, 5)) console.log(`  ${r.mode}: ${f}`);
  }
}

async function main(): Promise<void> {
  const missing = missingPrerequisites(['ip']);
  if (missing !== undefined) {
    console.log(`skipped: ${missing}`);
    return;
  }
  const dir = await scratchDir('governor-bench');
  const storm = await openStormLab({ dir, sizes: { firstStage: MIB, kernel: Number(flags['kernel-mib']) * MIB, initrd: Number(flags['initrd-mib']) * MIB } });
  const stopSignal = (): void => { void storm.teardown().finally(() => process.exit(130)); };
  process.once('SIGINT', stopSignal);
  process.once('SIGTERM', stopSignal);
  try {
    await storm.lab.exec(storm.clientNs, 'ip', ['addr', 'add', `${BMC_HOST}/32`, 'dev', 'lo']);
    console.log(`governor bench: ${String(HOSTS)} hosts, modes ${flags.modes}; load average ${load()}`);
    const results: ModeFigures[] = [];
    for (const mode of flags.modes.split(',')) results.push(await runMode(storm, mode));
    print(results);
  } finally {
    await storm.teardown();
    await removeDir(dir).catch(() => undefined);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
