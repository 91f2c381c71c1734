/**
 * @module One DHCP DORA of a simulated client over a {@link DhcpChannel}: DISCOVER until an
 * OFFER with a boot file arrives, then REQUEST that offer until the ACK, resending each
 * after the firmware's waits (PXE 2.1 / EDK2 `mPxeDhcpTimeout`: 4, 8, 16, 32 s) with `secs`
 * growing, and starting over with a new DISCOVER on a NAK (RFC 2131 §3.1 step 5, at most
 * {@link MAX_NAK_RESTARTS} times: EDK2's PXEBC_DHCP_RETRIES). A PXE client takes the first offer that
 * names a boot file (a full server's offer carries both the address and the boot file), the
 * way EDK2 selects among offers when no proxyDHCP is involved. Bounded in time and count.
 */
import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { DhcpChannel } from './dhcp-channel.js';
import { encodeClientDhcp, type DhcpReplyView } from './dhcp-messages.js';
import type { FirmwareArch } from './types.js';

/** Who is asking, and as what. */
export interface DoraRequest {
  index: number;
  mac: string;
  arch: FirmwareArch;
  stage: 'pxe' | 'ipxe';
  /** Waits after each transmission of DISCOVER (and of REQUEST), e.g. `[4000, 8000, 16000, 32000]`. */
  waitsMs: readonly number[];
}

/** A lease, as the client saw its ACK. */
export interface DoraResult {
  address: string;
  serverId: string;
  nextServer: string;
  bootFile: string;
  /** DISCOVERs and REQUESTs sent again after a wait ran out. */
  retransmissions: number;
  naks: number;
}

/** Why a DORA failed. */
export class DoraError extends Error {
  constructor(message: string, readonly retransmissions: number) {
    super(message);
    this.name = 'DoraError';
  }
}

/** NAKs a DORA survives before it fails (each restarts at DISCOVER). */
export const MAX_NAK_RESTARTS = 4;

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Sends `build(secs)` and waits for a reply `accept` returns true for, once per entry of
 * `waitsMs`; resolves with that reply and the transmissions made, or undefined when every wait
 * ran out. A NAK (for a REQUEST) resolves at once.
 */
async function transact(
  channel: DhcpChannel, xid: number, mac: string, startedMs: number, waitsMs: readonly number[],
  build: (secs: number) => Uint8Array, accept: (r: DhcpReplyView) => boolean,
): Promise<{ reply: DhcpReplyView | undefined; sent: number }> {
  let sent = 0;
  for (const waitMs of waitsMs) {
    const reply = await new Promise<DhcpReplyView | undefined>((resolve) => {
      let done = false;
      const finish = (r: DhcpReplyView | undefined): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        stop();
        resolve(r);
      };
      const stop = channel.listen(xid, mac, (r) => {
        if (r.type === 'nak' || accept(r)) finish(r);
      });
      const timer = setTimeout(() => { finish(undefined); }, waitMs);
      sent++;
      channel.broadcast(build((nowMs() - startedMs) / 1000)).catch(() => undefined);
    });
    if (reply !== undefined) return { reply, sent };
  }
  return { reply: undefined, sent };
}

/** Runs DISCOVER → OFFER → REQUEST → ACK (see the module comment); throws {@link DoraError}. */
export async function runDora(channel: DhcpChannel, q: DoraRequest): Promise<DoraResult> {
  if (q.waitsMs.length === 0) throw new RangeError('waitsMs needs at least one wait');
  const startedMs = nowMs();
  let retransmissions = 0;
  let naks = 0;
  for (let attempt = 0; attempt <= MAX_NAK_RESTARTS; attempt++) {
    const xid = randomInt(1, 0xffffffff);
    const base = { stage: q.stage, mac: q.mac, index: q.index, arch: q.arch, xid };
    const offer = await transact(channel, xid, q.mac, startedMs, q.waitsMs, (secs) => encodeClientDhcp({ ...base, type: 'discover', secs }),
      (r) => r.type === 'offer' && r.yiaddr !== '0.0.0.0' && r.bootFile !== '');
    retransmissions += Math.max(0, offer.sent - 1);
    if (offer.reply === undefined) throw new DoraError(`no OFFER with a boot file after ${offer.sent} DISCOVERs`, retransmissions);
    const o = offer.reply;
    const ack = await transact(channel, xid, q.mac, startedMs, q.waitsMs,
      (secs) => encodeClientDhcp({ ...base, type: 'request', secs, requestedAddress: o.yiaddr, serverId: o.serverId }),
      (r) => r.type === 'ack' && r.serverId === o.serverId);
    retransmissions += Math.max(0, ack.sent - 1);
    if (ack.reply === undefined) throw new DoraError(`no ACK for ${o.yiaddr} from ${o.serverId} after ${ack.sent} REQUESTs`, retransmissions);
    if (ack.reply.type === 'nak') {
      naks++;
      continue;
    }
    const a = ack.reply;
    if (a.yiaddr !== o.yiaddr) throw new DoraError(`ACK for ${a.yiaddr}, but ${o.yiaddr} was offered and requested`, retransmissions);
    return { address: a.yiaddr, serverId: a.serverId, nextServer: a.nextServer, bootFile: a.bootFile !== '' ? a.bootFile : o.bootFile, retransmissions, naks };
  }
  throw new DoraError(`NAK ${naks} times`, retransmissions);
}
