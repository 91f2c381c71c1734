/**
 * @module Controller sync at rack scale (issue 7's benchmark; not a test: no assertions on time).
 * Usage: node dist/test/bench/sync.bench.js [HOSTS=1000] [CYCLES=5] [CHANGED_PER_TICK=100] [TICKS=120]
 *
 * A LevelDB store in a temp dir holds HOSTS BareMetalHosts with inspected hardware, operation
 * history and an image; the real sync loop pushes to a controller on 127.0.0.1 that runs in a
 * child process (node:http: gunzips, validates with the wire decoder, acknowledges), so
 * `process.cpuUsage()` here is the agent's side only. It prints:
 * 1. **full sync** — loop start → every summary acknowledged (the startup resync, the same
 *    batches as the periodic `intervalSeconds` resync): pushes, gzip bytes on the wire, JSON bytes,
 *    agent CPU and wall time, averaged over CYCLES after one warm-up cycle;
 * 2. **incremental** pushes: one host changed, and 100 hosts changed with one event each;
 * 3. **one-hour outage**: the controller is down (connection refused) while every 30 s of
 *    simulated time CHANGED_PER_TICK hosts change power state and log one event each, for TICKS
 *    ticks; then the controller comes back and `syncNow()` drains the backlog: drain time,
 *    pushes, bytes, CPU, and events dropped by the backlog cap. (A running agent retries on its
 *    own backoff, at most `backoff.capMs` = 5 min later; the drain time excludes that wait.)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { BareMetalHost, ProvisioningState } from '../../agent/host/types.js';
import { openStore, type Store } from '../../agent/store/index.js';
import { createSyncLoop, decodePushRequest, type SyncLoop } from '../../agent/sync/index.js';
import { richHost } from '../unit/sync/fixtures.js';

// ---------------------------------------------------------------- controller (child process)

/** What the controller counted since it started. */
interface ControllerTotals {
  deliveries: number;
  duplicates: number;
  invalid: number;
  gzipBytes: number;
  jsonBytes: number;
  hosts: number;
  events: number;
}

type ControllerCommand = { id: number; cmd: 'up' | 'down' | 'totals' };
type ControllerReply = { id: number; port?: number; totals?: ControllerTotals };

function runController(): void {
  const totals: ControllerTotals = { deliveries: 0, duplicates: 0, invalid: 0, gzipBytes: 0, jsonBytes: 0, hosts: 0, events: 0 };
  const applied = new Set<string>();
  let server: Server | undefined;
  let port = 0;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      try {
        const json = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        const request = decodePushRequest(json.toString('utf8'));
        const key = String(req.headers['idempotency-key']);
        totals.deliveries += 1;
        totals.gzipBytes += raw.length;
        totals.jsonBytes += json.length;
        if (applied.has(key)) totals.duplicates += 1;
        else {
          applied.add(key);
          totals.hosts += request.hosts.length;
          totals.events += request.events.length;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ acknowledged: request.sequence }));
      } catch (err) {
        totals.invalid += 1;
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
      }
    });
  };
  process.on('message', (message: ControllerCommand) => {
    const reply = (extra: Omit<ControllerReply, 'id'> = {}): void => { process.send?.({ id: message.id, ...extra }); };
    if (message.cmd === 'totals') reply({ totals: { ...totals } });
    else if (message.cmd === 'down') {
      const s = server;
      server = undefined;
      if (s === undefined) reply();
      else {
        s.closeAllConnections();
        s.close(() => { reply(); });
      }
    } else {
      const s = createServer(handle);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as AddressInfo).port;
        server = s;
        reply({ port });
      });
    }
  });
  process.on('disconnect', () => { process.exit(0); });
}

/** The parent's handle on the controller process. */
class Controller {
  #next = 0;
  readonly #waiting = new Map<number, (reply: ControllerReply) => void>();
  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: ControllerReply) => {
      this.#waiting.get(reply.id)?.(reply);
      this.#waiting.delete(reply.id);
    });
  }
  static start(): Controller {
    return new Controller(fork(fileURLToPath(import.meta.url), ['--controller'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }
  #ask(cmd: ControllerCommand['cmd']): Promise<ControllerReply> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`controller did not answer ${cmd} within 10 s`)); }, 10_000);
      this.#waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.child.send({ id, cmd });
    });
  }
  async up(): Promise<number> {
    return (await this.#ask('up')).port ?? 0;
  }
  async down(): Promise<void> {
    await this.#ask('down');
  }
  async totals(): Promise<ControllerTotals> {
    const totals = (await this.#ask('totals')).totals;
    if (totals === undefined) throw new Error('controller sent no totals');
    return totals;
  }
  stop(): void {
    this.child.disconnect();
  }
}

// ---------------------------------------------------------------- the rack

const STATES: ProvisioningState[] = ['provisioned', 'provisioned', 'provisioned', 'provisioned', 'provisioned', 'provisioned', 'provisioned', 'available', 'available', 'inspecting'];

/** Host `i`: a rich, inspected host with its own MACs, serial, addresses, disk sizes and state. */
function rackHost(i: number): BareMetalHost {
  const name = `r${String(Math.floor(i / 40) + 1).padStart(2, '0')}-node-${String(i).padStart(4, '0')}`;
  const host = richHost(name);
  host.metadata.uid = randomUUID();
  const hex = (n: number): string => n.toString(16).padStart(2, '0');
  const mac = (port: number): string => `52:54:${hex(port)}:${hex((i >> 16) & 255)}:${hex((i >> 8) & 255)}:${hex(i & 255)}`;
  host.spec.bootMACAddress = mac(0);
  host.spec.bmc = { address: `redfish+https://10.1.${Math.floor(i / 250)}.${(i % 250) + 1}/redfish/v1/Systems/System.Embedded.1`, credentialsName: `${name}-bmc` };
  const state = STATES[i % STATES.length] ?? 'provisioned';
  host.status.provisioning = { ...host.status.provisioning, state, ID: `node-${i}` };
  host.status.poweredOn = state !== 'available';
  if (i % 97 === 0) {
    host.status.operationalStatus = 'error';
    host.status.errorType = 'provisioning error';
    host.status.errorMessage = 'Image provisioning failed: Timeout reached while waiting for callback for node';
    host.status.errorCount = 2;
  }
  if (host.status.hardware !== undefined) {
    host.status.hardware.systemVendor = { manufacturer: i % 3 === 0 ? 'HPE' : 'Dell Inc.', productName: i % 3 === 0 ? 'ProLiant DL360 Gen10' : 'PowerEdge R650', serialNumber: `SN${100000 + i}` };
    host.status.hardware.nics = [0, 1, 2, 3].map((p) => ({ name: `eno${p + 1}`, mac: mac(p), ...(p === 0 ? { ip: `172.22.${Math.floor(i / 250)}.${(i % 250) + 2}` } : {}) }));
    host.status.hardware.storage = [{ name: '/dev/sda', sizeBytes: 480_000_000_000 }, { name: '/dev/nvme0n1', sizeBytes: 3_840_000_000_000 + i * 4096 }, { name: '/dev/nvme1n1', sizeBytes: 3_840_000_000_000 }];
  }
  return host;
}

async function seed(store: Store, count: number): Promise<BareMetalHost[]> {
  for (let start = 0; start < count; start += 100) {
    const hosts = Array.from({ length: Math.min(100, count - start) }, (_, k) => rackHost(start + k));
    await store.commit(hosts.map((object) => ({ kind: 'host' as const, op: 'put' as const, object })));
  }
  return store.listHosts();
}

// ---------------------------------------------------------------- measuring

interface Sample {
  pushes: number;
  gzipBytes: number;
  jsonBytes: number;
  hosts: number;
  events: number;
  cpuMs: number;
  wallMs: number;
}

async function measure(controller: Controller, run: () => Promise<void>): Promise<Sample> {
  const before = await controller.totals();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const after = await controller.totals();
  return {
    pushes: after.deliveries - before.deliveries,
    gzipBytes: after.gzipBytes - before.gzipBytes,
    jsonBytes: after.jsonBytes - before.jsonBytes,
    hosts: after.hosts - before.hosts,
    events: after.events - before.events,
    cpuMs: (used.user + used.system) / 1000,
    wallMs,
  };
}

function average(samples: readonly Sample[]): Sample {
  const sum = samples.reduce((a, s) => ({
    pushes: a.pushes + s.pushes, gzipBytes: a.gzipBytes + s.gzipBytes, jsonBytes: a.jsonBytes + s.jsonBytes,
    hosts: a.hosts + s.hosts, events: a.events + s.events, cpuMs: a.cpuMs + s.cpuMs, wallMs: a.wallMs + s.wallMs,
  }));
  const n = samples.length;
  return { pushes: sum.pushes / n, gzipBytes: sum.gzipBytes / n, jsonBytes: sum.jsonBytes / n, hosts: sum.hosts / n, events: sum.events / n, cpuMs: sum.cpuMs / n, wallMs: sum.wallMs / n };
}

const kb = (bytes: number): string => `${(bytes / 1000).toFixed(1)} kB`;

function row(label: string, s: Sample): string[] {
  return [label, s.pushes.toFixed(s.pushes % 1 === 0 ? 0 : 1), String(Math.round(s.hosts)), String(Math.round(s.events)), kb(s.gzipBytes), kb(s.jsonBytes),
    s.hosts > 0 ? `${(s.gzipBytes / s.hosts).toFixed(0)} B` : '—', `${s.cpuMs.toFixed(0)} ms`, `${s.wallMs.toFixed(0)} ms`];
}

function printTable(rows: string[][]): void {
  const header = ['run', 'pushes', 'hosts', 'events', 'gzip', 'json', 'gzip/host', 'agent CPU', 'wall'];
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  for (const r of all) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  '));
}

/** Polls `done` every 20 ms, at most `timeoutMs`. */
async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main(): Promise<void> {
  const hostCount = Number(process.argv[2] ?? 1000);
  const cycles = Number(process.argv[3] ?? 5);
  const changedPerTick = Math.min(hostCount, Number(process.argv[4] ?? 100));
  const ticks = Number(process.argv[5] ?? 120);
  const stateDir = await mkdtemp(join(tmpdir(), 'rackside-sync-bench-'));
  const store = await openStore({ stateDir });
  const controller = Controller.start();
  let simMs = Date.parse('2026-03-01T10:00:00.000Z');
  let loop: SyncLoop | undefined;
  try {
    const port = await controller.up();
    const url = `http://127.0.0.1:${port}/api/v1/push`;
    const newLoop = (): SyncLoop => createSyncLoop({
      store, agentId: 'rack1-head', rack: 'rack1',
      controller: { url, intervalSeconds: 3600 },
      random: () => 0.5,
      now: () => new Date(simMs),
      logger: { info: () => undefined, warn: () => undefined },
    });
    const seedStart = performance.now();
    let hosts = await seed(store, hostCount);
    console.log(`${hostCount} hosts in a LevelDB store (seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s); controller on ${url} (child process)\n`);

    // 1. Full sync: warm-up, then CYCLES measured cycles of start → drained → stop.
    const full: Sample[] = [];
    for (let cycle = 0; cycle <= cycles; cycle++) {
      const l = newLoop();
      loop = l;
      const sample = await measure(controller, async () => {
        await l.start();
        await l.syncNow();
      });
      await l.stop();
      loop = undefined;
      if (sample.hosts !== hostCount) throw new Error(`full sync delivered ${sample.hosts} of ${hostCount} hosts`);
      if (cycle > 0) full.push(sample);
    }
    const rows: string[][] = [row(`full sync (avg of ${cycles})`, average(full))];

    // 2. Incremental pushes on a running loop.
    const running = newLoop();
    loop = running;
    await running.start();
    await running.syncNow();
    const change = async (batch: BareMetalHost[], withEvents: boolean): Promise<void> => {
      simMs += 30_000;
      const at = new Date(simMs).toISOString();
      const committed = await store.commit(batch.map((h) => {
        h.status.poweredOn = !h.status.poweredOn;
        h.status.lastUpdated = at;
        return { kind: 'host' as const, op: 'put' as const, object: h };
      }));
      const byName = new Map(committed.hosts.map((h) => [h.metadata.name, h]));
      hosts = hosts.map((h) => byName.get(h.metadata.name) ?? h);
      if (withEvents) {
        await store.appendEvents(batch.map((h) => ({
          time: at, type: 'Normal' as const, reason: h.status.poweredOn ? 'PowerOn' : 'PowerOff',
          message: `power ${h.status.poweredOn ? 'on' : 'off'} requested by the reconciler (online=${String(h.spec.online)})`,
          source: 'reconciler', host: h.metadata.name,
        })));
      }
    };
    const one = hosts[0];
    if (one === undefined) throw new Error('no hosts');
    rows.push(row('1 host changed', await measure(controller, async () => {
      await change([one], false);
      await running.syncNow();
    })));
    rows.push(row('100 hosts + 100 events', await measure(controller, async () => {
      await change(hosts.slice(0, Math.min(100, hostCount)), true);
      await running.syncNow();
    })));

    // 3. One-hour outage, then the drain.
    await controller.down();
    const outageStart = performance.now();
    const outageCpu = process.cpuUsage();
    let appended = 0;
    for (let tick = 0; tick < ticks; tick++) {
      const from = (tick * changedPerTick) % hostCount;
      const batch = Array.from({ length: changedPerTick }, (_, k) => hosts[(from + k) % hostCount]).filter((h) => h !== undefined);
      await change(batch, true);
      appended += batch.length;
      const expected = appended;
      await until(`tick ${tick} taken into the outbox`, () => {
        const s = running.status();
        return s.backlog.events + s.droppedEvents >= expected;
      }, 60_000);
    }
    const outageCpuMs = process.cpuUsage(outageCpu);
    const backlog = running.status();
    console.log(`outage: ${ticks} ticks × ${changedPerTick} hosts changed (${ticks * changedPerTick} host changes, ${appended} events, ${(ticks * 30 / 60).toFixed(0)} simulated minutes) ` +
      `taken in ${((performance.now() - outageStart) / 1000).toFixed(1)} s wall, ${((outageCpuMs.user + outageCpuMs.system) / 1000).toFixed(0)} ms agent CPU; ` +
      `backlog ${backlog.backlog.hosts} hosts, ${backlog.backlog.events} events, ${backlog.droppedEvents} events dropped by the cap, ${backlog.consecutiveFailures} failed attempts\n`);
    await controller.up();
    const drain = await measure(controller, async () => { await running.syncNow(); });
    const after = running.status();
    if (after.backlog.hosts !== 0 || after.backlog.events !== 0 || after.consecutiveFailures !== 0) throw new Error(`drain incomplete: ${JSON.stringify(after.backlog)}, failures ${after.consecutiveFailures}`);
    rows.push(row('drain after 1 h outage', drain));
    await running.stop();
    loop = undefined;
    printTable(rows);
    const totals = await controller.totals();
    console.log(`\ncontroller: ${totals.deliveries} deliveries, ${totals.duplicates} duplicates, ${totals.invalid} invalid; drain rate ${(drain.hosts / (drain.wallMs / 1000)).toFixed(0)} hosts/s + ${(drain.events / (drain.wallMs / 1000)).toFixed(0)} events/s`);
  } finally {
    await loop?.stop();
    controller.stop();
    await store.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--controller') runController();
else await main();
