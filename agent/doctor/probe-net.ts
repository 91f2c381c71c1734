/**
 * @module `rackside doctor`'s network probes: a DHCPDISCOVER broadcast from the provisioning
 * interface to hear every DHCP server on the segment, a HEAD request to the controller, and a
 * knock on every BMC the running agent manages (TCP connect for Redfish, RMCP/ASF presence ping
 * for IPMI). They observe only; checks.ts and checks-host.ts judge.
 */
import { readFile } from 'node:fs/promises';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { redactBmcAddress } from '../../drivers/index.js';
import type { Config } from '../config.js';
import { classifyTransportError, displayUrl } from '../sync/http-push.js';
import { bmcKnock, decodeProbeOffer, encodeAsfPresencePing, encodeProbeDiscover, isAsfPresencePong } from './parse.js';
import type { BmcProbe, BmcReachability, ControllerProbe, DhcpOffer, DhcpProbe, InterfaceProbe } from './types.js';
import { bindSocket, sendTo } from './udp-socket.js';

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Broadcasts a DISCOVER (random `xid`, the interface's MAC, BROADCAST flag) out of the
 * provisioning interface twice and collects every OFFER for that xid for `listenMs`.
 *
 * Node's dgram has no SO_BINDTODEVICE, so two sockets share port 68 (SO_REUSEADDR): one bound
 * to the interface's own address sends — Linux routes a limited broadcast out of the device
 * that owns the bound source address — and one bound to 0.0.0.0 receives, since replies to
 * the BROADCAST flag go to 255.255.255.255:68 (RFC 2131 §4.1), which an address-bound socket
 * never sees. Offers for other transactions (another client on the host) are ignored by xid.
 */
export async function probeDhcpServers(iface: InterfaceProbe, listenMs: number, xid: number): Promise<DhcpProbe> {
  if (!iface.exists) return { state: 'not-run', reason: `interface ${iface.name} not found` };
  const source = iface.addresses[0];
  if (source === undefined) return { state: 'not-run', reason: `${iface.name} has no IPv4 address to send a DISCOVER from` };
  if (iface.mac === undefined) return { state: 'not-run', reason: `${iface.name} has no hardware address` };
  const receiver = createSocket({ type: 'udp4', reuseAddr: true });
  const sender = createSocket({ type: 'udp4', reuseAddr: true });
  const offers: DhcpOffer[] = [];
  receiver.on('message', (payload, rinfo) => {
    const offer = decodeProbeOffer(payload, xid, rinfo.address);
    if (offer !== undefined) offers.push(offer);
  });
  receiver.on('error', () => undefined);
  try {
    await bindSocket(receiver, '0.0.0.0', 68);
    await bindSocket(sender, source.address, 68);
    sender.setBroadcast(true);
    const discover = encodeProbeDiscover(iface.mac, xid);
    await sendTo(sender, discover, '255.255.255.255', 67);
    await sleep(listenMs / 2);
    await sendTo(sender, discover, '255.255.255.255', 67);
    await sleep(listenMs / 2);
    return { state: 'done', interface: iface.name, listenMs, offers };
  } catch (err) {
    return { state: 'error', error: `${iface.name}: ${message(err)}` };
  } finally {
    receiver.close();
    sender.close();
  }
}

/** HEAD to the controller URL with its token or client certificate, bounded by `timeoutMs`. */
export async function probeController(config: Config, timeoutMs: number): Promise<ControllerProbe> {
  const c = config.controller;
  if (c === undefined) return { state: 'not-configured' };
  const url = displayUrl(c.url);
  const files: Record<string, Buffer> = {};
  for (const key of ['ca', 'cert', 'key'] as const) {
    const path = c.tls?.[key];
    if (path === undefined) continue;
    try {
      files[key] = await readFile(path);
    } catch (err) {
      return { state: 'error', url, code: 'config', message: `cannot read controller.tls.${key} ${path}: ${message(err)}` };
    }
  }
  const dispatcher = new Agent({ connect: { ...files, timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    const res = await request(c.url, {
      method: 'HEAD', dispatcher, signal: AbortSignal.timeout(timeoutMs),
      headers: c.token === undefined ? {} : { authorization: `Bearer ${c.token}` },
    });
    await res.body.dump();
    return { state: 'reachable', url, httpStatus: res.statusCode };
  } catch (err) {
    const failure = classifyTransportError(err, 'HEAD');
    return { state: 'error', url, code: failure.code, message: failure.message };
  } finally {
    await dispatcher.close();
  }
}

/** The management API base URL: `--server`, else the config's management.listen (wildcards → loopback). */
export function managementUrl(config: Config, server: string | undefined): string {
  if (server !== undefined) return server.replace(/\/+$/, '');
  const { host, port } = config.management.listen;
  const local = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}

function tcpKnock(hostname: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port, timeout: timeoutMs });
    const done = (error: string | undefined): void => {
      socket.destroy();
      resolve(error);
    };
    socket.once('connect', () => {
      done(undefined);
    });
    socket.once('timeout', () => {
      done(`no TCP answer in ${timeoutMs} ms`);
    });
    socket.once('error', (err) => {
      done(message(err));
    });
  });
}

/** RMCP/ASF presence ping to an IPMI BMC: two tries, `timeoutMs` in all; resolves to an error text or undefined. */
async function udpKnock(hostname: string, port: number, timeoutMs: number, tag: number): Promise<string | undefined> {
  const socket = createSocket({ type: hostname.includes(':') ? 'udp6' : 'udp4' });
  const seen: { answered: boolean; failure?: string } = { answered: false };
  const waiting = (): boolean => !seen.answered && seen.failure === undefined;
  socket.on('message', (payload) => {
    if (isAsfPresencePong(payload, tag)) seen.answered = true;
  });
  socket.on('error', (err) => {
    seen.failure = message(err);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.connect(port, hostname, () => {
        resolve();
      });
      socket.once('error', reject);
    });
    for (let attempt = 0; attempt < 2 && waiting(); attempt++) {
      socket.send(encodeAsfPresencePing(tag));
      for (let waited = 0; waited < timeoutMs / 2 && waiting(); waited += 50) await sleep(50);
    }
  } catch (err) {
    seen.failure ??= message(err);
  } finally {
    socket.close();
  }
  if (seen.answered) return undefined;
  return seen.failure ?? `no RMCP presence pong in ${timeoutMs} ms`;
}

interface ListedHost {
  metadata?: { name?: string };
  spec?: { bmc?: { address?: string } };
}

/** Lists hosts from the running agent's API and knocks on each BMC, `concurrency` at a time. */
export async function probeBmcs(server: string, concurrency: number, timeoutMs: number): Promise<BmcProbe> {
  let items: ListedHost[];
  try {
    const res = await fetch(`${server}/api/v1/hosts`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return { state: 'no-api', server, error: `HTTP ${res.status}` };
    items = ((await res.json()) as { items?: ListedHost[] }).items ?? [];
  } catch (err) {
    return { state: 'no-api', server, error: message(err instanceof Error && err.cause !== undefined ? err.cause : err) };
  }
  const results: BmcReachability[] = [];
  const invalid: { host: string; error: string }[] = [];
  const queue = items.filter((h) => h.spec?.bmc?.address !== undefined && h.spec.bmc.address !== '');
  let next = 0;
  let tag = 0;
  const worker = async (): Promise<void> => {
    for (let item = queue[next++]; item !== undefined; item = queue[next++]) {
      const host = item.metadata?.name ?? '?';
      const address = item.spec?.bmc?.address ?? '';
      let knock;
      try {
        knock = bmcKnock(address);
      } catch (err) {
        invalid.push({ host, error: message(err) });
        continue;
      }
      if (knock.kind === 'none') continue;
      const target = `${knock.hostname.includes(':') ? `[${knock.hostname}]` : knock.hostname}:${knock.port}`;
      tag = (tag + 2) & 0xfe;
      const error = knock.protocol === 'tcp' ? await tcpKnock(knock.hostname, knock.port, timeoutMs) : await udpKnock(knock.hostname, knock.port, timeoutMs, tag);
      results.push({ host, address: redactBmcAddress(address), target, protocol: knock.protocol, reachable: error === undefined, ...(error === undefined ? {} : { error }) });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, worker));
  results.sort((a, b) => a.host.localeCompare(b.host));
  return { state: 'done', server, results, invalid };
}
