/**
 * Fuzzes the DHCP decoder and responder:
 * mutations of the real-world request fixtures, random byte strings, and random option areas
 * behind a valid header. Every input must either decode or throw DhcpDecodeError with an offset
 * inside the datagram (never anything else, never hang); every decoded request must go through
 * `respond` in each mode without throwing, and every reply must encode within the client's size
 * limit, never name another server, and never offer an address outside the configured ranges
 * and reservations (proxy and boot-server replies carry none).
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=120000 node --test dist/test/fuzz/dhcp.test.js`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseIpv4 } from '../../bootsvc/dhcp/address.js';
import { DhcpDecodeError } from '../../bootsvc/dhcp/errors.js';
import { getServerIdentifier } from '../../bootsvc/dhcp/option-values.js';
import { decodeDhcpPacket, encodeDhcpPacket, maxReplyBytes, type DhcpPacket } from '../../bootsvc/dhcp/packet.js';
import { respond } from '../../bootsvc/dhcp/responder.js';
import type { ResponderContext } from '../../bootsvc/dhcp/responder-context.js';
import { header, hex, opt, overloadedAck, requestFixtures, ascii } from '../unit/bootsvc/dhcp/fixtures.js';
import { context, decisions, lease, SERVER } from '../unit/bootsvc/dhcp/responder-fixtures.js';
import type { Dice } from './dice.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateBytes, showBytes } from './mutate-bytes.js';

const INPUTS = fuzzInputs(30_000);
const seeds: readonly Uint8Array[] = [...Object.values(requestFixtures), overloadedAck];
const validHeader = hex(header({ xid: '00000001', mac: '525400123456' }));

/** Option TLVs worth splicing in: message types, overload, PXE class, arch, user class, relay info, pad/end. */
const TOKENS = [
  opt(53, '01'), opt(53, '03'), opt(53, '04'), opt(53, '07'), opt(52, '03'), opt(52, '01'), opt(60, ascii('PXEClient:Arch:00007:UNDI:003016')),
  opt(60, ascii('HTTPClient')), opt(93, '0007'), opt(93, '000b'), opt(77, ascii('iPXE')), opt(97, `00${'8a'.repeat(16)}`), opt(82, '0106657468302f31'),
  opt(50, '0a140064'), opt(54, '0a140001'), opt(57, '0240'), opt(57, '0000'), opt(55, '0103060c0f1c2a'), opt(61, '01525400123456'), 'ff', '00', '3500', '35ff',
].map(hex);

/** Interesting header bytes: op, htype, hlen, hops, flags, and the option overload byte's neighbours. */
function headerByte(dice: Dice, b: Buffer): Buffer {
  const at = dice.pick([0, 1, 2, 3, 10, 11]);
  if (at < b.length) b[at] = dice.pick([0, 1, 2, 3, 6, 16, 17, 255, 0x80]);
  return b;
}

const contexts: ResponderContext[] = [
  context(),
  context({ mode: 'proxy', bootDecision: decisions.bios }),
  context({ mode: 'proxy', serverPort: 4011, bootDecision: decisions.http }),
  context({ bootDecision: undefined, unknownHosts: 'discover', discoveryDecision: decisions.arm64 }),
  context({
    leases: [lease('52:54:00:12:34:56', '10.20.0.120'), lease('aa', '10.30.0.100'), lease('bb', '10.30.0.101', 'declined')],
    reservations: [{ mac: '02:00:00:00:d1:c1', address: '10.20.0.50' }],
  }),
];

/** Addresses a full-mode reply may carry in `yiaddr`. */
function allowedAddress(ctx: ResponderContext, address: string): boolean {
  if (address === '0.0.0.0' || ctx.reservations.some((r) => r.address === address)) return true;
  const v = parseIpv4(address) ?? -1;
  return ctx.subnets.some((s) => v >= (parseIpv4(s.rangeStart) ?? 0) && v <= (parseIpv4(s.rangeEnd) ?? -1));
}

function check(bytes: Uint8Array): string {
  let packet: DhcpPacket;
  try {
    packet = decodeDhcpPacket(bytes);
  } catch (err) {
    if (!(err instanceof DhcpDecodeError)) throw err;
    assert.ok(err.offset >= 0 && err.offset <= bytes.length, `error offset ${err.offset} outside the datagram`);
    return 'rejected';
  }
  let replies = 0;
  for (const ctx of contexts) {
    const r = respond(packet, ctx);
    if (r.kind !== 'reply') continue;
    replies++;
    const out = encodeDhcpPacket(r.packet, { maxPacketBytes: maxReplyBytes(packet) });
    assert.ok(out.length <= Math.max(300, maxReplyBytes(packet)), `reply of ${out.length} bytes over the client's limit`);
    if (r.messageType !== 'nak') assert.equal(getServerIdentifier(r.packet.options), SERVER, 'replies always name this server');
    if (ctx.mode === 'proxy' || ctx.serverPort === 4011) assert.equal(r.packet.yiaddr, '0.0.0.0', 'proxy and boot-server replies never carry an address');
    else assert.ok(allowedAddress(ctx, r.packet.yiaddr), `offered ${r.packet.yiaddr} outside the ranges`);
  }
  return replies > 0 ? 'answered' : 'decoded';
}

test('fuzz setup: the fixtures themselves decode and are answered', () => {
  for (const bytes of Object.values(requestFixtures)) {
    const r = respond(decodeDhcpPacket(bytes), contexts[0] ?? context());
    assert.notEqual(r.kind, 'no-reply');
  }
});

test(`fuzz dhcp: ${INPUTS} mutated, random and header-prefixed datagrams`, async (t) => {
  const report = await runFuzz({
    name: 'dhcp',
    seed: fuzzSeed(0x5eed2131),
    inputs: INPUTS,
    generate(dice, i) {
      if (i % 3 !== 2) return mutateBytes(dice, seeds[i % seeds.length] ?? validHeader, { seeds, tokens: TOKENS, maxBytes: 1500, custom: headerByte });
      const body = dice.bytes(dice.int(700));
      return i % 2 === 0 ? body : Buffer.concat([validHeader, body]);
    },
    check,
    show: (b) => showBytes(b),
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  assert.ok((report.outcomes.rejected ?? 0) > 0 && (report.outcomes.answered ?? 0) > 0, 'the mutator both breaks and keeps requests');
});
