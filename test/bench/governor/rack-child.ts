/**
 * @module The rack of governor.bench.ts, two processes inside the PXE-storm lab's client
 * namespace (`ip netns exec NS node rack-child.js --role …`), so that neither's work delays
 * the other's clock:
 * - `--role clients` listens on the unix socket `--socket` for lines `boot <system>` and then
 *   boots that system (`clientMac(system − 1)`) through the PXE simulator (test/lab/pxe-sim):
 *   DHCP DORA → TFTP first stage → iPXE DORA → HTTP script, kernel, initrd; then acts as the
 *   rackside ramdisk: a third DORA for its own lease, heartbeats with the token of the script,
 *   and for `deploy` the image streamed from boot HTTP, the config drive, an ok result. Every
 *   100 ms it samples the namespace's `eth0` receive counter (what reaches the rack over the
 *   wire: boot HTTP, TFTP, DHCP, BMC requests) and the DHCP packets its clients sent and got.
 * - `--role bmc`: one virtual Redfish BMC (test/lab/redfish) with `--systems` Systems on
 *   `--bmc-host`, whose in-memory hosts note every power-on and, on one with a one-time PXE
 *   boot, send `boot <system>` to the clients; it also serves the OS image the agent caches
 *   (`/os.raw`, random bytes, and its `.sha256sum`).
 * Both write what they recorded as JSON to `--out` on SIGTERM, with their event-loop delay, and
 * exit; the first stdout line is a JSON hello.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingMessage } from 'node:http';
import { connect, createServer as createSocketServer, type AddressInfo, type Socket } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { MemoryHostBackend, type HostBootTarget } from '../../lab/redfish/backend.js';
import { startVirtualRedfishBmc } from '../../lab/redfish/virtual-bmc.js';
import { openDhcpChannel, type DhcpChannel } from '../../lab/pxe-sim/dhcp-channel.js';
import { runDora } from '../../lab/pxe-sim/dhcp-exchange.js';
import { clientMac, simulateFirmwareBoot, type ClientResult } from '../../lab/pxe-sim/index.js';

const { values: flags } = parseArgs({
  options: {
    role: { type: 'string', default: 'clients' },
    socket: { type: 'string' },
    systems: { type: 'string', default: '40' },
    'bmc-host': { type: 'string', default: '10.88.200.1' },
    'mac-prefix': { type: 'string', default: '02:00:00' },
    'image-bytes': { type: 'string', default: String(32 << 20) },
    out: { type: 'string' },
  },
});

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What the simulated ramdisk did. */
interface RamdiskRecord {
  dhcpStartMs?: number;
  dhcpEndMs?: number;
  firstHeartbeatMs?: number;
  deployCommandMs?: number;
  imageStartMs?: number;
  imageEndMs?: number;
  imageBytes?: number;
  resultMs?: number;
  failure?: string;
}

/** One boot of one system. */
interface BootRecord {
  system: string;
  mac: string;
  startedMs: number;
  firmware?: ClientResult;
  ramdisk: RamdiskRecord;
}

/** A 100 ms sample of the counters. */
interface Sample {
  atMs: number;
  rxBytes: number;
  dhcpSent: number;
  dhcpReceived: number;
}

const systems = Number(flags.systems);
const powerOns: { system: string; atMs: number; target: HostBootTarget }[] = [];
const boots: BootRecord[] = [];
const samples: Sample[] = [];
let channel: DhcpChannel | undefined;

/** A GET from `localAddress` that counts body bytes as they arrive; resolves with the body kept up to `keep` bytes. */
function get(url: string, localAddress: string, onBytes: (n: number) => void, keep = 0): Promise<{ status: number; text: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, timeout: 120_000 }, (res: IncomingMessage) => {
      const kept: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        onBytes(chunk.length);
        if (bytes <= keep) kept.push(chunk);
      });
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, text: Buffer.concat(kept).toString('utf8'), bytes }); });
      res.on('error', reject);
    });
    req.on('timeout', () => { req.destroy(new Error(`GET ${url}: no byte for 120 s`)); });
    req.on('error', reject);
    req.end();
  });
}

function post(url: string, localAddress: string, token: string, body: unknown): Promise<{ status: number; text: string }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', localAddress, timeout: 60_000, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }); });
      res.on('error', reject);
    });
    req.on('timeout', () => { req.destroy(new Error(`POST ${url} timed out`)); });
    req.on('error', reject);
    req.end(text);
  });
}

function answerOf(text: string): Map<string, string> {
  return new Map(text.trim().split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

/** The simulated rackside ramdisk after the firmware part (see the module comment). */
async function runRamdisk(record: BootRecord, index: number, address: string, scriptUrl: string): Promise<void> {
  const r = record.ramdisk;
  if (channel === undefined) throw new Error('no DHCP channel');
  r.dhcpStartMs = now();
  // The ramdisk's own lease (udhcpc in the real one): counted like the others.
  await runDora(channel, { index, mac: record.mac, arch: 'efi', stage: 'ipxe', waitsMs: [1000, 2000, 4000, 8000, 16000] });
  r.dhcpEndMs = now();
  const script = await get(scriptUrl, address, () => undefined, 256 * 1024);
  const kernelLine = script.text.split('\n').find((l) => l.startsWith('kernel ')) ?? '';
  const param = (name: string): string => new RegExp(`${name}=(\\S+)`).exec(kernelLine)?.[1] ?? '';
  const api = param('rackside\\.url').replace(/\/+$/, '');
  const token = param('rackside\\.token');
  if (api === '' || token === '') throw new Error(`no rackside.url/token in the script: ${kernelLine.slice(0, 200)}`);
  let last: string | null = null;
  const started = now();
  for (;;) {
    const hb = await post(`${api}/ramdisk/v1/heartbeat`, address, token, { version: 'sim', boot_mac: record.mac, ip: address, uptime_seconds: Math.round((now() - started) / 1000), last_command_id: last });
    r.firstHeartbeatMs ??= now();
    if (hb.status === 401) throw new Error('heartbeat refused (401): the boot was replaced');
    const answer = answerOf(hb.text);
    const command = answer.get('command') ?? 'none';
    const commandId = answer.get('command_id') ?? '';
    if (command === 'deploy') {
      r.deployCommandMs = now();
      const imageUrl = answer.get('image_url') ?? '';
      r.imageStartMs = now();
      const image = await get(imageUrl, address, () => undefined);
      r.imageEndMs = now();
      r.imageBytes = image.bytes;
      const drive = answer.get('configdrive_url');
      if (drive !== undefined) await get(drive, address, () => undefined);
      const done = await post(`${api}/ramdisk/v1/result`, address, token, {
        command_id: commandId, command: 'deploy', status: 'ok', message: null,
        details: {
          root_device: { name: '/dev/vda', size: 8589934592, rotational: false, serial: `SIM${String(index)}` },
          image: { url: imageUrl, bytes: image.bytes, checksum_type: 'sha256', checksum: answer.get('image_checksum') ?? '', attempts: 1 },
          config_drive: { offset_bytes: 8589869056, size_bytes: 65536 },
          duration_seconds: Math.round((now() - (r.imageStartMs ?? now())) / 1000),
        },
        log: ['deploy: simulated'],
      });
      if (done.status !== 200) throw new Error(`result answered ${String(done.status)}: ${done.text.slice(0, 200)}`);
      r.resultMs = now();
      return;
    }
    if (command !== 'none' && commandId !== '') {
      // Anything else (clean, inspect) is not part of this bench: report it done at once.
      await post(`${api}/ramdisk/v1/result`, address, token, { command_id: commandId, command, status: 'ok', message: null, details: {}, log: [] });
      last = commandId;
    }
    if (now() - started > 15 * 60_000) throw new Error('no deploy command within 15 minutes');
    await sleep(1000);
  }
}

/** A network boot of system `system` (1-based), index = system − 1. */
async function boot(system: string): Promise<void> {
  const index = Number(system) - 1;
  const record: BootRecord = { system, mac: clientMac(index, flags['mac-prefix']), startedMs: now(), ramdisk: {} };
  boots.push(record);
  if (channel === undefined) throw new Error('no DHCP channel');
  const firmware = await simulateFirmwareBoot(channel, { index, mac: record.mac, arch: 'efi', blksize: 1468, windowsize: 4, timeouts: { httpIdleMs: 120_000 } });
  record.firmware = firmware;
  const scriptUrl = firmware.phases.script?.detail;
  if (firmware.failure !== undefined || firmware.address === undefined || scriptUrl === undefined) return;
  try {
    await runRamdisk(record, index, firmware.address, scriptUrl);
  } catch (err) {
    record.ramdisk.failure = err instanceof Error ? err.message : String(err);
  }
}

/** A host that network-boots when powered on (or reset) with a one-time PXE boot. */
class BootingHost extends MemoryHostBackend {
  constructor(private readonly system: string, private readonly clients: Socket) {
    super();
  }

  override powerOn(target: HostBootTarget): Promise<void> {
    if (this.power === 'Off') this.started(target);
    return super.powerOn(target);
  }

  override reset(target: HostBootTarget): Promise<void> {
    this.started(target);
    return super.reset(target);
  }

  private started(target: HostBootTarget): void {
    powerOns.push({ system: this.system, atMs: now(), target });
    if (target === 'Pxe') this.clients.write(`boot ${this.system}\n`);
  }
}

function rxBytes(): number {
  try {
    return Number(readFileSync('/sys/class/net/eth0/statistics/rx_bytes', 'utf8').trim());
  } catch {
    return 0;
  }
}

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

/** Writes `record` (with the event-loop delay) to `--out` on SIGTERM, runs `close`, exits. */
function dumpOnSigterm(record: () => object, close: () => Promise<void>): void {
  process.once('SIGTERM', () => {
    void (async () => {
      const eventLoop = { p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6 };
      if (flags.out !== undefined) await writeFile(flags.out, JSON.stringify({ ...record(), eventLoop }));
      await close().catch(() => undefined);
      process.exit(0);
    })();
  });
}

async function runClients(socketPath: string): Promise<void> {
  channel = await openDhcpChannel();
  const server = createSocketServer((conn) => {
    const lines = createInterface({ input: conn });
    lines.on('line', (line) => {
      const system = /^boot (\d+)$/.exec(line)?.[1];
      if (system !== undefined) void boot(system);
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  const timer = setInterval(() => {
    const stats = channel?.stats();
    samples.push({ atMs: now(), rxBytes: rxBytes(), dhcpSent: stats?.sent ?? 0, dhcpReceived: stats?.received ?? 0 });
  }, 100);
  process.stdout.write(`${JSON.stringify({ clients: socketPath })}\n`);
  dumpOnSigterm(() => ({ boots, samples }), async () => {
    clearInterval(timer);
    server.close();
    await channel?.close();
  });
}

async function runBmc(socketPath: string): Promise<void> {
  const host = flags['bmc-host'];
  const clients = connect(socketPath);
  await new Promise<void>((resolve, reject) => clients.once('connect', resolve).once('error', reject));
  const image = randomBytes(Number(flags['image-bytes']));
  const sha256 = createHash('sha256').update(image).digest('hex');
  const upstream = createServer((req, res) => {
    if (req.url === '/os.raw') res.writeHead(200, { 'content-length': image.length }).end(image);
    else if (req.url === '/os.raw.sha256sum') res.writeHead(200).end(`${sha256}  os.raw\n`);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, host, resolve));
  const bmc = await startVirtualRedfishBmc({ https: false, host, systems, backend: (id) => new BootingHost(id, clients) });
  const imageUrl = `http://${host}:${String((upstream.address() as AddressInfo).port)}/os.raw`;
  process.stdout.write(`${JSON.stringify({ bmcPort: Number(bmc.host.split(':')[1]), imageUrl, imageBytes: image.length })}\n`);
  dumpOnSigterm(() => ({ powerOns }), async () => {
    await bmc.stop();
    upstream.closeAllConnections();
    upstream.close();
    clients.end();
  });
}

async function main(): Promise<void> {
  const socketPath = flags.socket;
  if (socketPath === undefined) throw new Error('--socket is required');
  if (flags.role === 'bmc') await runBmc(socketPath);
  else await runClients(socketPath);
}

main().catch((err: unknown) => {
  process.stderr.write(`rack-child: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(2);
});
