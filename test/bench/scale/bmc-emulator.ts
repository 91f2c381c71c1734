/**
 * @module Many light Redfish BMCs in one process, for scale.bench.ts. BMC `n` (1…N) is the
 * System `/redfish/v1/Systems/<n>` of one of a few plain-HTTP servers on 127.0.0.1 (BMC `n` on
 * server `(n − 1) mod S`), so an agent addresses it as
 * `redfish+http://127.0.0.1:<port>/redfish/v1/Systems/<n>`. Each answers the minimal tree the
 * agent's Redfish driver reads (DMTF shapes as in test/lab/redfish/payloads.ts, cut down): service
 * root, SessionService login (DSP0266 §13.3, tokens good on their server) or basic auth, the
 * ComputerSystem with PowerState and `ComputerSystem.Reset`, boot override PATCH, a Bios
 * resource (Bios v1_2, no attribute registry or settings object), and the
 * Processors/Memory/EthernetInterfaces/Storage/Drives one level deep that fast (out-of-band)
 * inspection walks. Every answer waits `latencyMs` ± `jitter` (real BMCs answer in tens to
 * hundreds of ms), so requests overlap when a client sends them concurrently.
 *
 * Per BMC it counts requests in flight (and the most ever seen at once), requests by kind, and
 * when its power state was last read: a GET of the ComputerSystem on its own. The driver reads
 * the ComputerSystem before the Bios too (to find its link), so a ComputerSystem GET followed by
 * a Bios GET of the same BMC within {@link BIOS_FOLLOW_MS} is a BIOS read, not a power read (one
 * client queues its requests per BMC, so the Bios GET is the next request). A control server answers
 * `GET /stats` (JSON {@link EmulatorStats}) and `POST /reset` (restart the max-in-flight and
 * request counters of a measurement window). Run as a child process:
 * `node dist/test/bench/scale/bmc-emulator.js --bmcs N [--servers S] [--latency-ms MS]
 * [--jitter 0.5] [--basic]`; it prints one JSON line {@link EmulatorHello} and exits on SIGTERM
 * or when stdin closes.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The first line the emulator prints. */
export interface EmulatorHello {
  /** Port of server `s` (BMC `n` lives on server `(n − 1) % ports.length`). */
  ports: number[];
  controlPort: number;
  bmcs: number;
}

/** What `GET /stats` answers; arrays are indexed by BMC number − 1. */
export interface EmulatorStats {
  /** `Date.now()` of the emulator when the stats were taken. */
  nowMs: number;
  /**
   * Per BMC, when its power state was read (its ComputerSystem answered, not for a BIOS read):
   * the last read before the last reset (if any), then every read since, oldest first. Reads in
   * the last {@link BIOS_FOLLOW_MS} are not classified yet and left out.
   */
  powerReadsMs: number[][];
  /** Most requests in flight at once per BMC since the last reset. */
  maxInFlight: number[];
  /** Requests per BMC since the last reset. */
  requests: number[];
  /** Requests since the last reset by kind (`root`, `login`, `system`, `power-read`, `bios`, `reset`, `patch`, `inventory`, `other`). */
  byKind: Record<string, number>;
  /** BMCs powered on now. */
  poweredOn: number;
  /** `Date.now()` of the last reset. */
  sinceMs: number;
}

interface Options {
  bmcs: number;
  servers: number;
  latencyMs: number;
  jitter: number;
  sessions: boolean;
}

/** How soon a Bios GET must follow a ComputerSystem GET for the two to count as one BIOS read. */
export const BIOS_FOLLOW_MS = 2000;

const USER = 'admin';
const PASSWORD = 'password';
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'odata-version': '4.0', ...(text === '' ? {} : { 'content-type': 'application/json' }), ...headers });
  res.end(text);
};
const link = (path: string): { '@odata.id': string } => ({ '@odata.id': path });
const members = (path: string, ids: readonly string[]): unknown => ({
  '@odata.id': path, '@odata.type': '#Collection', Members: ids.map((id) => link(`${path}/${id}`)), 'Members@odata.count': ids.length,
});

/** The bench's fixed MAC for BMC `n`'s first NIC (also the host's bootMACAddress). */
export function emulatedMac(n: number): string {
  return `02:00:00:${((n >> 16) & 0xff).toString(16).padStart(2, '0')}:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}`;
}

/** Answers the ComputerSystem subtree of BMC `n`; `rest` is the path after `/Systems/<n>`. */
function systemAnswer(n: number, rest: string, base: string, poweredOn: boolean): unknown {
  switch (rest) {
    case '':
      return {
        '@odata.id': base, '@odata.type': '#ComputerSystem.v1_20_0.ComputerSystem', Id: String(n), Name: 'System', SystemType: 'Physical',
        Manufacturer: 'rackside', Model: 'Scale Bench Server', SerialNumber: `SB${String(n).padStart(6, '0')}`,
        UUID: `5ca1eb3c-0000-4000-8000-${String(n).padStart(12, '0')}`, PowerState: poweredOn ? 'On' : 'Off', BiosVersion: '1.0.0',
        Status: { State: 'Enabled', Health: 'OK' },
        Boot: { BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideTarget: 'None', BootSourceOverrideMode: 'UEFI',
          'BootSourceOverrideTarget@Redfish.AllowableValues': ['None', 'Pxe', 'Hdd', 'Cd', 'BiosSetup'] },
        ProcessorSummary: { Count: 1, LogicalProcessorCount: 16 }, MemorySummary: { TotalSystemMemoryGiB: 64 },
        Processors: link(`${base}/Processors`), Memory: link(`${base}/Memory`), EthernetInterfaces: link(`${base}/EthernetInterfaces`),
        Storage: link(`${base}/Storage`), Bios: link(`${base}/Bios`), Links: { ManagedBy: [link(`/redfish/v1/Managers/${n}`)] },
        Actions: { '#ComputerSystem.Reset': { target: `${base}/Actions/ComputerSystem.Reset`,
          'ResetType@Redfish.AllowableValues': ['On', 'ForceOff', 'GracefulShutdown', 'ForceRestart', 'GracefulRestart'] } },
      };
    case '/Bios':
      return { '@odata.id': `${base}${rest}`, '@odata.type': '#Bios.v1_2_0.Bios', Id: 'BIOS', Name: 'BIOS Configuration Current Settings',
        Attributes: { BootMode: 'Uefi', ProcTurboMode: 'Enabled', SriovGlobalEnable: 'Disabled' } };
    case '/Processors': return members(`${base}/Processors`, ['CPU.0']);
    case '/Processors/CPU.0':
      return { '@odata.id': `${base}${rest}`, Id: 'CPU.0', ProcessorType: 'CPU', InstructionSet: 'x86-64', Model: 'Bench CPU', TotalCores: 8,
        TotalThreads: 16, MaxSpeedMHz: 2400, Status: { State: 'Enabled', Health: 'OK' } };
    case '/Memory': return members(`${base}/Memory`, ['DIMM.0']);
    case '/Memory/DIMM.0': return { '@odata.id': `${base}${rest}`, Id: 'DIMM.0', CapacityMiB: 65536, Status: { State: 'Enabled' } };
    case '/EthernetInterfaces': return members(`${base}/EthernetInterfaces`, ['NIC.1']);
    case '/EthernetInterfaces/NIC.1':
      return { '@odata.id': `${base}${rest}`, Id: 'NIC.1', MACAddress: emulatedMac(n).toUpperCase(), SpeedMbps: 25000, LinkStatus: 'LinkUp', Status: { State: 'Enabled' } };
    case '/Storage': return members(`${base}/Storage`, ['1']);
    case '/Storage/1':
      return { '@odata.id': `${base}${rest}`, Id: '1', StorageControllers: [{ MemberId: '0', SupportedRAIDTypes: [] }], Drives: [link(`${base}/Storage/1/Drives/Disk.0`)] };
    case '/Storage/1/Drives/Disk.0':
      return { '@odata.id': `${base}${rest}`, Id: 'Disk.0', Model: 'Bench SSD', SerialNumber: `SBD${n}`, CapacityBytes: 960_197_124_096, MediaType: 'SSD',
        Protocol: 'SATA', Status: { State: 'Enabled', Health: 'OK' } };
    default: return undefined;
  }
}

/** Starts the servers; resolves with their ports and a stop function. */
export async function startEmulator(o: Options): Promise<{ hello: EmulatorHello; stop(): Promise<void> }> {
  const inFlight = new Int32Array(o.bmcs);
  const maxInFlight = new Int32Array(o.bmcs);
  const requests = new Int32Array(o.bmcs);
  const powerReads: number[][] = Array.from({ length: o.bmcs }, () => []);
  /** ComputerSystem GETs not yet known to be power reads (0: none): a Bios GET may still follow. */
  const unclassified = new Float64Array(o.bmcs);
  const poweredOn = new Uint8Array(o.bmcs).fill(1);
  let byKind: Record<string, number> = {};
  let sinceMs = Date.now();
  const tokens = new Set<string>();
  const delay = (): number => Math.max(0, o.latencyMs * (1 + o.jitter * (2 * Math.random() - 1)));
  const count = (kind: string): void => { byKind[kind] = (byKind[kind] ?? 0) + 1; };

  /** Counts BMC `i`'s pending ComputerSystem GET as a power read unless it may still turn out to be a BIOS read at `nowMs`. */
  const classify = (i: number, nowMs: number, waitForBios = false): void => {
    const at = unclassified[i] ?? 0;
    if (at === 0 || (waitForBios && nowMs - at < BIOS_FOLLOW_MS)) return;
    unclassified[i] = 0;
    if (at >= sinceMs) count('power-read'); // a read from before the last reset counts in no window
    powerReads[i]?.push(at);
  };

  const authorized = (req: IncomingMessage): boolean => {
    const token = req.headers['x-auth-token'];
    if (typeof token === 'string') return tokens.has(token);
    return req.headers.authorization === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  };

  const answer = (serverIndex: number, req: IncomingMessage, res: ServerResponse, body: string): void => {
    const path = (req.url ?? '/').split('?')[0]?.replace(/\/+$/, '') ?? '';
    const method = req.method ?? 'GET';
    if (path === '/redfish/v1' && method === 'GET') {
      count('root');
      json(res, 200, { '@odata.id': '/redfish/v1', '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot', Id: 'RootService', RedfishVersion: '1.17.0',
        Vendor: 'rackside', Systems: link('/redfish/v1/Systems'), Managers: link('/redfish/v1/Managers'),
        ...(o.sessions ? { SessionService: link('/redfish/v1/SessionService'), Links: { Sessions: link('/redfish/v1/SessionService/Sessions') } } : {}) });
      return;
    }
    if (o.sessions && path === '/redfish/v1/SessionService/Sessions' && method === 'POST') {
      count('login');
      const creds = JSON.parse(body === '' ? '{}' : body) as { UserName?: unknown; Password?: unknown };
      if (creds.UserName !== USER || creds.Password !== PASSWORD) { json(res, 401, { error: { message: 'bad credentials' } }); return; }
      const token = randomUUID();
      tokens.add(token);
      const uri = `/redfish/v1/SessionService/Sessions/${token.slice(0, 8)}`;
      json(res, 201, { '@odata.id': uri, Id: token.slice(0, 8), UserName: USER }, { 'x-auth-token': token, location: uri });
      return;
    }
    if (!authorized(req)) { json(res, 401, { error: { message: 'authentication required' } }); return; }
    if (path.startsWith('/redfish/v1/SessionService/Sessions/') && method === 'DELETE') { count('logout'); json(res, 204, undefined); return; }
    const match = /^\/redfish\/v1\/(Systems|Managers)\/([0-9]+)(\/.*)?$/.exec(path);
    const n = Number(match?.[2] ?? 0);
    if (match === null || n < 1 || n > o.bmcs || (n - 1) % o.servers !== serverIndex) { count('other'); json(res, 404, { error: { message: `no ${path}` } }); return; }
    const i = n - 1;
    const rest = match[3] ?? '';
    if (match[1] === 'Managers') {
      count('other');
      json(res, rest === '' ? 200 : 404, rest === '' ? { '@odata.id': path, Id: String(n), ManagerType: 'BMC', FirmwareVersion: '1.0' } : { error: { message: 'not here' } });
      return;
    }
    const base = `/redfish/v1/Systems/${n}`;
    if (rest === '/Actions/ComputerSystem.Reset' && method === 'POST') {
      count('reset');
      const type = (JSON.parse(body === '' ? '{}' : body) as { ResetType?: unknown }).ResetType;
      if (type === 'On' || type === 'ForceRestart' || type === 'GracefulRestart') poweredOn[i] = 1;
      else if (type === 'ForceOff' || type === 'GracefulShutdown') poweredOn[i] = 0;
      else { json(res, 400, { error: { message: `ResetType ${String(type)}` } }); return; }
      json(res, 204, undefined);
      return;
    }
    if (rest === '' && method === 'PATCH') { count('patch'); json(res, 204, undefined); return; }
    const payload = method === 'GET' ? systemAnswer(n, rest, base, poweredOn[i] === 1) : undefined;
    if (payload === undefined) { count('other'); json(res, 404, { error: { message: `no ${method} ${path}` } }); return; }
    if (rest === '/Bios') {
      count('bios');
      unclassified[i] = 0;
    } else {
      classify(i, Date.now());
      if (rest === '') {
        count('system');
        unclassified[i] = Date.now();
      } else count('inventory');
    }
    json(res, 200, payload);
  };

  const bmcOf = (serverIndex: number, url: string | undefined): number => {
    const n = Number(/^\/redfish\/v1\/(?:Systems|Managers)\/([0-9]+)/.exec(url ?? '')?.[1] ?? 0);
    return n >= 1 && n <= o.bmcs && (n - 1) % o.servers === serverIndex ? n - 1 : -1;
  };

  const servers: Server[] = [];
  const listen = (server: Server): Promise<number> => new Promise((resolve) => server.listen(0, '127.0.0.1', () => { resolve((server.address() as AddressInfo).port); }));
  const ports: number[] = [];
  for (let s = 0; s < o.servers; s++) {
    const server = createServer((req, res) => {
      const i = bmcOf(s, req.url);
      if (i >= 0) {
        requests[i] = (requests[i] ?? 0) + 1;
        const now = (inFlight[i] ?? 0) + 1;
        inFlight[i] = now;
        if (now > (maxInFlight[i] ?? 0)) maxInFlight[i] = now;
        res.once('close', () => { inFlight[i] = (inFlight[i] ?? 1) - 1; });
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        setTimeout(() => {
          try {
            answer(s, req, res, Buffer.concat(chunks).toString('utf8'));
          } catch (err) {
            json(res, 400, { error: { message: String(err) } });
          }
        }, delay());
      });
    });
    servers.push(server);
    ports.push(await listen(server));
  }
  const control = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/reset') {
      maxInFlight.set(inFlight);
      requests.fill(0);
      for (const reads of powerReads) reads.splice(0, reads.length - 1);
      byKind = {};
      sinceMs = Date.now();
      json(res, 204, undefined);
      return;
    }
    const nowMs = Date.now();
    for (let i = 0; i < o.bmcs; i++) classify(i, nowMs, true);
    const stats: EmulatorStats = {
      nowMs, powerReadsMs: powerReads, maxInFlight: [...maxInFlight], requests: [...requests], byKind,
      poweredOn: poweredOn.reduce((a, b) => a + b, 0), sinceMs,
    };
    json(res, 200, stats);
  });
  servers.push(control);
  const controlPort = await listen(control);
  return {
    hello: { ports, controlPort, bmcs: o.bmcs },
    stop: () => Promise.all(servers.map((server) => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => { resolve(); });
    }))).then(() => undefined),
  };
}

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const emulator = await startEmulator({
    bmcs: Number(option('bmcs', '1000')), servers: Number(option('servers', '4')), latencyMs: Number(option('latency-ms', '50')),
    jitter: Number(option('jitter', '0.5')), sessions: !process.argv.includes('--basic'),
  });
  console.log(JSON.stringify(emulator.hello));
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void emulator.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
}
