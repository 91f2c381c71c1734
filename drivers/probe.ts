/**
 * @module The BMC capability probe's I/O runner: given a metal3 address or a bare host, it asks
 * Redfish (HTTPS, then HTTP: ServiceRoot, Systems, Managers, VirtualMedia, SecureBoot, Bios,
 * UpdateService/SessionService/EventService) and IPMI lanplus (Get Channel Authentication
 * Capabilities, Get Channel Cipher Suites — session-less, no credentials needed), each request
 * bounded in time and the whole probe within `timeoutMs` (default 10 s), and returns a
 * {@link ProbeReport} (probe-decode.ts holds the decoding and the recommendation). Credentials
 * go only to a Redfish service whose certificate is trusted, or with `insecure`.
 */
import { createSocket } from 'node:dgram';
import http from 'node:http';
import https from 'node:https';
import { parseBmcAddress } from './bmc-address.js';
import { cipherSuiteRecordData, CIPHER_SUITE_CHUNK_BYTES, decodeCipherSuiteRecords, encodeGetChannelCipherSuites } from './ipmi/cipher-suites.js';
import { decodeGetChannelAuthCapabilities, encodeGetChannelAuthCapabilities, Privilege, type IpmiCommandRequest } from './ipmi/commands.js';
import { decodeIpmiResponse, encodeIpmiRequest } from './ipmi/messages.js';
import { decodeSessionPacket, encodeIpmi15Packet } from './ipmi/session-packet.js';
import {
  featuresOf, ianaVendor, linkOf, listedSuiteIds, membersOf, readServiceRoot, readSystem, readVirtualMedia, recommend,
  type IpmiFacts, type ProbeAttempt, type ProbeReport, type RedfishFacts,
} from './probe-decode.js';

export type { ProbeAttempt, ProbeFeature, ProbeReport, RedfishFacts, IpmiFacts } from './probe-decode.js';

/** Options of {@link probeBmc}. */
export interface ProbeOptions {
  /** A metal3 BMC address (`redfish-virtualmedia+https://10.0.0.5/…`, `ipmi://10.0.0.5:623`) or a bare host/IP. */
  readonly address: string;
  readonly username?: string;
  readonly password?: string;
  /** Accept a certificate that does not verify (self-signed BMCs). */
  readonly insecure?: boolean;
  /** Whole-probe budget in ms (default 10 000). */
  readonly timeoutMs?: number;
  /** Per-request budget in ms (default 3 000 for HTTP, 1 500 per IPMI datagram). */
  readonly requestTimeoutMs?: number;
}

type Json = Record<string, unknown>;
type HttpAnswer = { status: number; body?: Json } | { error: string; certificate: boolean };

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 4 * 1024 * 1024;

class Budget {
  readonly #end: number;
  constructor(readonly start: number, total: number) {
    this.#end = start + total;
  }
  left(): number {
    return Math.max(0, this.#end - Date.now());
  }
}

/** One GET with a hard deadline; never throws. */
function getJson(url: URL, opts: { insecure: boolean; auth?: string; timeoutMs: number }): Promise<HttpAnswer> {
  return new Promise((resolve) => {
    const lib = url.protocol === 'https:' ? https : http;
    const headers: Record<string, string> = { accept: 'application/json', 'odata-version': '4.0' };
    if (opts.auth !== undefined) headers.authorization = `Basic ${opts.auth}`;
    let done = false;
    const finish = (answer: HttpAnswer): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(answer);
    };
    const req = lib.request(url, { method: 'GET', headers, rejectUnauthorized: !opts.insecure, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY_BYTES) finish({ error: 'answer larger than 4 MiB', certificate: false });
        else chunks.push(c);
      });
      res.on('end', () => {
        let body: Json | undefined;
        try {
          const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) body = parsed as Json;
        } catch {
          body = undefined;
        }
        finish(body === undefined ? { status: res.statusCode ?? 0 } : { status: res.statusCode ?? 0, body });
      });
      res.on('error', (e) => {
        finish({ error: e.message, certificate: false });
      });
    });
    const timer = setTimeout(() => {
      finish({ error: `no answer within ${opts.timeoutMs} ms`, certificate: false });
    }, opts.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => {
      const code = e.code ?? '';
      const certificate = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code);
      const text = code === 'ECONNREFUSED' ? 'connection refused' : certificate ? `certificate not trusted (${code})` : `${code !== '' ? `${code}: ` : ''}${e.message}`;
      finish({ error: text, certificate });
    });
    req.end();
  });
}

interface RedfishRun {
  facts: RedfishFacts;
  readonly get: (path: string) => Promise<Json | undefined>;
}

function answerText(a: HttpAnswer): string {
  return 'error' in a ? a.error : `HTTP ${a.status}${a.body === undefined && a.status === 200 ? ' (not JSON)' : ''}`;
}

/** Finds the ServiceRoot over HTTPS then HTTP; the returned getter records every attempt. */
async function openRedfish(bases: readonly string[], options: ProbeOptions, budget: Budget, attempts: ProbeAttempt[]): Promise<RedfishRun | undefined> {
  const perRequest = options.requestTimeoutMs ?? 3000;
  for (const base of bases) {
    if (budget.left() < 50) break;
    let insecure = options.insecure === true;
    const url = new URL('/redfish/v1/', base);
    let t0 = Date.now();
    let answer = await getJson(url, { insecure, timeoutMs: Math.min(perRequest, budget.left()) });
    attempts.push({ protocol: 'redfish', request: `GET ${url.href}`, ok: !('error' in answer) && answer.status === 200 && answer.body !== undefined, answer: answerText(answer), elapsedMs: Date.now() - t0 });
    let untrusted = insecure && url.protocol === 'https:';
    if ('error' in answer && answer.certificate && !insecure) {
      // Read the ServiceRoot without verification (no credentials sent) to say what answered.
      insecure = true;
      untrusted = true;
      t0 = Date.now();
      answer = await getJson(url, { insecure, timeoutMs: Math.min(perRequest, budget.left()) });
      attempts.push({ protocol: 'redfish', request: `GET ${url.href} (certificate not verified, no credentials)`, ok: !('error' in answer) && answer.status === 200, answer: answerText(answer), elapsedMs: Date.now() - t0 });
    }
    if ('error' in answer || answer.status !== 200 || answer.body === undefined) continue;
    const facts: RedfishFacts = { base, untrustedCertificate: untrusted, services: { UpdateService: undefined, SessionService: undefined, EventService: undefined } };
    readServiceRoot(facts, answer.body);
    const sendCredentials = options.insecure === true || !untrusted;
    const auth = sendCredentials && options.username !== undefined ? Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64') : undefined;
    const get = async (path: string): Promise<Json | undefined> => {
      if (budget.left() < 50) return undefined;
      const target = new URL(path, base);
      const start = Date.now();
      const a = await getJson(target, { insecure, ...(auth !== undefined ? { auth } : {}), timeoutMs: Math.min(perRequest, budget.left()) });
      const ok = !('error' in a) && a.status === 200 && a.body !== undefined;
      attempts.push({ protocol: 'redfish', request: `GET ${target.href}`, ok, answer: answerText(a), elapsedMs: Date.now() - start });
      if (!('error' in a) && (a.status === 401 || a.status === 403)) facts.authRefused ??= `${path} answered HTTP ${a.status}${auth === undefined ? (sendCredentials ? ' (no credentials given)' : ' (credentials withheld: certificate not trusted, use --insecure)') : ''}`;
      return ok && !('error' in a) ? a.body : undefined;
    };
    return { facts, get };
  }
  return undefined;
}

/** Reads what the BMC offers beyond the ServiceRoot: system, manager, virtual media, BIOS, services. */
async function exploreRedfish(run: RedfishRun, root: string): Promise<void> {
  const { facts, get } = run;
  const systems = await get(`${root}Systems`);
  const systemPath = membersOf(systems)[0];
  if (systemPath !== undefined) {
    facts.systemPath = systemPath;
    const system = await get(systemPath);
    if (system !== undefined) {
      readSystem(facts, system);
      const secureBoot = linkOf(system, 'SecureBoot');
      facts.secureBoot = secureBoot === undefined ? false : (await get(secureBoot)) !== undefined;
      const biosPath = linkOf(system, 'Bios');
      const bios = biosPath === undefined ? undefined : await get(biosPath);
      if (bios !== undefined) {
        const attributes = typeof bios.Attributes === 'object' && bios.Attributes !== null ? Object.keys(bios.Attributes).length : 0;
        facts.bios = { attributes, registry: typeof bios.AttributeRegistry === 'string' };
      }
    }
  }
  const managerPath = membersOf(await get(`${root}Managers`))[0];
  const manager = managerPath === undefined ? undefined : await get(managerPath);
  const fw = manager?.FirmwareVersion;
  if (typeof fw === 'string') facts.bmcFirmware = fw;
  const mediaPath = linkOf(manager, 'VirtualMedia');
  if (mediaPath !== undefined) {
    const slots: Json[] = [];
    for (const member of membersOf(await get(mediaPath)).slice(0, 4)) {
      const slot = await get(member);
      if (slot !== undefined) slots.push(slot);
    }
    readVirtualMedia(facts, slots);
  } else if (manager !== undefined) {
    facts.virtualMedia = { slots: 0, cd: false };
  }
  for (const service of ['UpdateService', 'EventService'] as const) {
    if (facts.services[service] === true) facts.services[service] = (await get(`${root}${service}`)) !== undefined;
  }
}

/** Sends one session-less IPMI request and waits for its answer; undefined on silence. */
async function ipmiRequest(socket: ReturnType<typeof createSocket>, host: string, port: number, request: IpmiCommandRequest, rqSeq: number, timeoutMs: number): Promise<{ completionCode: number; data: Buffer } | { error: string }> {
  return new Promise((resolve) => {
    const onMessage = (msg: Buffer): void => {
      try {
        const packet = decodeSessionPacket(msg);
        const response = decodeIpmiResponse(packet.payload);
        if (response.command !== request.command || response.rqSeq !== rqSeq) return;
        finish({ completionCode: response.completionCode, data: response.data });
      } catch {
        // Not ours or malformed: keep waiting.
      }
    };
    const onError = (e: Error): void => {
      finish({ error: e.message });
    };
    const finish = (v: { completionCode: number; data: Buffer } | { error: string }): void => {
      clearTimeout(timer);
      socket.off('message', onMessage);
      socket.off('error', onError);
      resolve(v);
    };
    const timer = setTimeout(() => {
      finish({ error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    socket.on('message', onMessage);
    socket.on('error', onError);
    socket.send(encodeIpmi15Packet(encodeIpmiRequest({ ...request, rqSeq })), port, host);
  });
}

/** IPMI lanplus: channel capabilities, then the cipher suite list (a few pages at most). */
async function probeIpmi(host: string, port: number, options: ProbeOptions, budget: Budget, attempts: ProbeAttempt[]): Promise<IpmiFacts> {
  const facts: IpmiFacts = { port };
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  socket.on('error', () => undefined);
  const perRequest = options.requestTimeoutMs ?? 1500;
  try {
    let seq = 1;
    const ask = async (name: string, request: IpmiCommandRequest): Promise<{ completionCode: number; data: Buffer } | undefined> => {
      for (let attempt = 0; attempt < 2 && budget.left() >= 50; attempt += 1) {
        const t0 = Date.now();
        const answer = await ipmiRequest(socket, host, port, request, seq++ & 0x3f, Math.min(perRequest, budget.left()));
        const ok = !('error' in answer) && answer.completionCode === 0;
        attempts.push({ protocol: 'ipmi', request: `${name} (udp ${host}:${port})`, ok, answer: 'error' in answer ? answer.error : `completion code 0x${answer.completionCode.toString(16).padStart(2, '0')}`, elapsedMs: Date.now() - t0 });
        if (!('error' in answer)) return answer;
      }
      return undefined;
    };
    const caps = await ask('Get Channel Authentication Capabilities', encodeGetChannelAuthCapabilities(Privilege.administrator));
    if (caps === undefined || caps.completionCode !== 0) return facts;
    facts.capabilities = decodeGetChannelAuthCapabilities(caps.data);
    const vendor = ianaVendor(facts.capabilities.oemIana);
    if (vendor !== undefined) facts.vendor = vendor;
    const records: Buffer[] = [];
    for (let index = 0; index < 8; index += 1) {
      const page = await ask('Get Channel Cipher Suites', encodeGetChannelCipherSuites(index));
      if (page === undefined || page.completionCode !== 0) break;
      const data = cipherSuiteRecordData(page.data);
      records.push(data);
      if (data.length < CIPHER_SUITE_CHUNK_BYTES) {
        facts.cipherSuites = listedSuiteIds(decodeCipherSuiteRecords(Buffer.concat(records)));
        break;
      }
    }
    return facts;
  } finally {
    socket.close();
  }
}

/** Where to look for Redfish: the address's own URL first when it names Redfish, else 443 then 80. */
function redfishBases(type: string, transport: string | undefined, host: string, port: number | undefined): string[] {
  const h = host.includes(':') ? `[${host}]` : host;
  if (type === 'redfish' && port !== undefined) {
    const first = transport === 'http' ? 'http' : 'https';
    return [`${first}://${h}:${port}`, `${first === 'https' ? 'http' : 'https'}://${h}:${port}`];
  }
  return [`https://${h}`, `http://${h}`];
}

/**
 * Probes the BMC at `options.address` (see the module comment). Never throws for what the BMC
 * does; a malformed address throws BmcAddressError. Resolves within `timeoutMs` plus a few ms.
 */
export async function probeBmc(options: ProbeOptions): Promise<ProbeReport> {
  const parsed = parseBmcAddress(options.address);
  const budget = new Budget(Date.now(), options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const host = parsed.hostname;
  const ipmiPort = parsed.type === 'ipmi' ? (parsed.port ?? 623) : 623;
  const redfishAttempts: ProbeAttempt[] = [];
  const ipmiAttempts: ProbeAttempt[] = [];
  const redfishPort = parsed.type === 'ipmi' ? undefined : parsed.port;
  // Redfish and IPMI run side by side so a silent protocol does not eat the other's time.
  const [redfish, ipmi] = await Promise.all([
    (async (): Promise<RedfishFacts | undefined> => {
      const run = await openRedfish(redfishBases(parsed.type, parsed.transport, host, redfishPort), options, budget, redfishAttempts);
      if (run === undefined) return undefined;
      await exploreRedfish(run, '/redfish/v1/');
      return run.facts;
    })(),
    probeIpmi(host, ipmiPort, options, budget, ipmiAttempts),
  ]);
  const ipmiFacts = ipmi.capabilities === undefined ? undefined : ipmi;
  const { address, notes } = recommend(redfish, ipmiFacts, host);
  if (parsed.scheme === 'ipmi' && !options.address.includes('://') && redfish !== undefined) {
    notes.push(`"${options.address}" has no scheme: metal3 reads it as IPMI; use the recommended address to get Redfish`);
  }
  return {
    address: options.address,
    givenType: parsed.type,
    host,
    ...(redfish?.manufacturer ?? redfish?.vendor ?? ipmiFacts?.vendor) !== undefined ? { vendor: redfish?.manufacturer ?? redfish?.vendor ?? ipmiFacts?.vendor } : {},
    ...(redfish?.model ?? redfish?.product) !== undefined ? { model: redfish?.model ?? redfish?.product } : {},
    ...(redfish?.bmcFirmware !== undefined ? { firmware: redfish.bmcFirmware } : {}),
    ...(redfish !== undefined ? { redfish } : {}),
    ...(ipmiFacts !== undefined ? { ipmi: ipmiFacts } : {}),
    features: featuresOf(redfish, ipmiFacts),
    attempts: [...redfishAttempts, ...ipmiAttempts],
    ...(address !== undefined ? { recommendedAddress: address } : {}),
    notes,
    answered: redfish !== undefined || ipmiFacts !== undefined,
    elapsedMs: Date.now() - budget.start,
  };
}
