/**
 * @module A scriptable DHCP test client, run inside a lab namespace with plain `dgram`
 * (`ip netns exec NS node dhcp-test-client.js COMMAND JSON`), for exchanges no packaged
 * client performs. Prints one JSON result on stdout. Commands:
 * - `pxe-proxy` {ifname, mac, bootServer}: the PXE 2.1 proxyDHCP flow — broadcast a PXE
 *   DISCOVER, collect the site server's address OFFER and rackside's proxy OFFER, REQUEST the
 *   address from the site server, configure it, then unicast a boot-server REQUEST to
 *   `bootServer:4011` and report its ACK.
 * - `relay` {giaddr, server, mac, relayInfoHex}: act as a relay agent — send a DISCOVER with
 *   `giaddr` and option 82 from port 67 to `server:67` and report the reply that comes back.
 * - `storm` {count, macPrefix, ms}: broadcast `count` DISCOVERs from distinct MACs and report
 *   every OFFER seen within `ms`.
 * - `listen` {port, ms}: report every DHCP message (requests and replies) arriving on `port` for
 *   `ms` (it writes `listening` to stderr once bound).
 * - `garbage` {to, port, count}: send malformed datagrams.
 * Broadcasts need a route: the caller adds `255.255.255.255/32 dev IF` to an unaddressed interface.
 */
import { execFileSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { DhcpOption } from '../../bootsvc/dhcp/options.js';
import type { DhcpPacket } from '../../bootsvc/dhcp/packet.js';
import { decodeReply, encodeClientMessage, optionText, replyType, type ClientMessage } from './dhcp-packets.js';

interface Reply {
  from: string;
  op: number;
  type: string | undefined;
  xid: number;
  yiaddr: string;
  siaddr: string;
  giaddr: string;
  file: string;
  serverId: string | undefined;
  vendorClass: string | undefined;
  relayInfoHex: string | undefined;
  mac: string;
}

/** The message type name (`discover`, `offer`, …) of requests and replies alike. */
function summarize(p: DhcpPacket, from: string): Reply {
  const sid = p.options.get(DhcpOption.serverIdentifier);
  const relay = p.options.get(DhcpOption.relayAgentInformation);
  return {
    from,
    op: p.op,
    type: replyType(p),
    xid: p.xid,
    yiaddr: p.yiaddr,
    siaddr: p.siaddr,
    giaddr: p.giaddr,
    file: p.file,
    serverId: sid === undefined ? undefined : Array.from(sid).join('.'),
    vendorClass: optionText(p, DhcpOption.vendorClass),
    relayInfoHex: relay === undefined ? undefined : Buffer.from(relay).toString('hex'),
    mac: Array.from(p.chaddr.subarray(0, 6), (b) => b.toString(16).padStart(2, '0')).join(':'),
  };
}

async function openSocket(port: number): Promise<{ socket: Socket; replies: Reply[]; garbage: number }> {
  const socket = createSocket({ type: 'udp4', reuseAddr: true });
  const state = { socket, replies: [] as Reply[], garbage: 0 };
  socket.on('message', (msg, rinfo) => {
    try {
      const p = decodeReply(msg);
      state.replies.push(summarize(p, `${rinfo.address}:${rinfo.port}`));
    } catch {
      state.garbage++;
    }
  });
  await new Promise<void>((resolve) => socket.bind(port, resolve));
  socket.setBroadcast(true);
  return state;
}

function send(socket: Socket, m: ClientMessage, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.send(encodeClientMessage(m), port, address, (err) => {
      if (err) reject(err);
      else resolve();
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitReply(replies: Reply[], match: (r: Reply) => boolean, ms: number): Promise<Reply | undefined> {
  for (let waited = 0; waited < ms; waited += 20) {
    const found = replies.find(match);
    if (found !== undefined) return found;
    await sleep(20);
  }
  return undefined;
}

const PXE = { vendorClass: 'PXEClient:Arch:00007:UNDI:003016', archType: 7, uuid: Uint8Array.from([0, ...Array.from({ length: 16 }, (_, i) => i + 1)]) };

async function pxeProxy(a: { ifname: string; mac: string; bootServer: string }): Promise<unknown> {
  const { socket, replies } = await openSocket(68);
  const xid = 0x5a5a0001;
  await send(socket, { type: 'discover', mac: a.mac, xid, broadcast: true, ...PXE }, '255.255.255.255', 67);
  await waitReply(replies, (r) => r.type === 'offer' && r.yiaddr !== '0.0.0.0', 5000);
  await waitReply(replies, (r) => r.type === 'offer' && r.yiaddr === '0.0.0.0', 2000);
  const addressOffer = replies.find((r) => r.type === 'offer' && r.yiaddr !== '0.0.0.0');
  const proxyOffer = replies.find((r) => r.type === 'offer' && r.yiaddr === '0.0.0.0');
  if (addressOffer?.serverId === undefined) return { error: 'no address offer', replies };
  await send(socket, { type: 'request', mac: a.mac, xid, broadcast: true, serverId: addressOffer.serverId, requestedAddress: addressOffer.yiaddr, ...PXE }, '255.255.255.255', 67);
  const ack = await waitReply(replies, (r) => r.type === 'ack' && r.xid === xid, 5000);
  if (ack === undefined) return { error: 'no ack from the site server', replies };
  execFileSync('ip', ['addr', 'add', `${ack.yiaddr}/24`, 'dev', a.ifname]);
  // PXE 2.1 §2.2.5: the boot-server request is unicast to port 4011 from the client's own address.
  const bootXid = 0x5a5a0002;
  await send(socket, { type: 'request', mac: a.mac, xid: bootXid, ciaddr: ack.yiaddr, vendorSpecific: Uint8Array.of(71, 4, 0x80, 0, 0, 0, 255), ...PXE }, a.bootServer, 4011);
  const bootAck = await waitReply(replies, (r) => r.type === 'ack' && r.xid === bootXid, 5000);
  socket.close();
  return { addressOffer, proxyOffer, ack, bootAck, replies };
}

async function relay(a: { giaddr: string; server: string; mac: string; relayInfoHex: string }): Promise<unknown> {
  const { socket, replies } = await openSocket(67);
  const xid = 0x7e1a0001;
  await send(socket, { type: 'discover', mac: a.mac, xid, giaddr: a.giaddr, relayInformation: Buffer.from(a.relayInfoHex, 'hex'), ...PXE }, a.server, 67);
  const offer = await waitReply(replies, (r) => r.op === 2 && r.xid === xid, 5000);
  socket.close();
  return { offer, replies };
}

async function storm(a: { count: number; macPrefix: string; ms: number }): Promise<unknown> {
  const { socket, replies } = await openSocket(68);
  for (let i = 0; i < a.count; i++) {
    await send(socket, { type: 'discover', mac: `${a.macPrefix}:${i.toString(16).padStart(2, '0')}`, xid: 0x51000000 + i, broadcast: true, ...PXE }, '255.255.255.255', 67);
  }
  await sleep(a.ms);
  socket.close();
  return { offers: replies.filter((r) => r.op === 2 && r.type === 'offer') };
}

async function listen(a: { port: number; ms: number }): Promise<unknown> {
  const state = await openSocket(a.port);
  process.stderr.write('listening\n');
  await sleep(a.ms);
  state.socket.close();
  return { replies: state.replies, garbage: state.garbage };
}

async function garbage(a: { to: string; port: number; count: number }): Promise<unknown> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, resolve));
  socket.setBroadcast(true);
  const valid = encodeClientMessage({ type: 'discover', mac: '52:54:00:99:99:99', broadcast: true });
  const payloads = [Buffer.alloc(0), Buffer.alloc(10, 1), Buffer.alloc(300, 0xff), valid.subarray(0, 250), Buffer.concat([valid.subarray(0, 236), Buffer.from([1, 2, 3, 4])])];
  let sent = 0;
  for (let i = 0; i < a.count; i++) {
    const payload = payloads[i % payloads.length] ?? Buffer.alloc(1);
    await new Promise<void>((resolve, reject) => {
      socket.send(payload, a.port, a.to, (err) => {
        if (err) reject(err);
        else resolve();
      });
    });
    sent++;
  }
  socket.close();
  return { sent };
}

const commands: Record<string, (a: never) => Promise<unknown>> = { 'pxe-proxy': pxeProxy, relay, storm, listen, garbage };
const command = commands[process.argv[2] ?? ''];
if (command === undefined) {
  process.stderr.write(`usage: dhcp-test-client.js ${Object.keys(commands).join('|')} JSON\n`);
  process.exit(2);
}
const result = await command(JSON.parse(process.argv[3] ?? '{}') as never);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
