/**
 * Fuzzes the DHCPv6 decoder and responder: mutations of the real clients' requests (OVMF PXE and
 * HTTP boot, iPXE, dhclient -6, udhcpc6, a relayed Solicit, and dhclient -6's and dhcrelay -6's
 * datagrams as captured), random byte strings, and
 * random options behind a valid header. Every input must either decode or throw
 * Dhcp6DecodeError with an offset inside the datagram (nothing else, never hang); every decoded
 * client request must go through the responder without throwing, and every reply must encode,
 * decode again, echo the transaction id, name this server, and bind no address outside the
 * range.
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=120000 node --test dist/test/fuzz/dhcp6.test.js`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dhcp6DecodeError } from '../../bootsvc/dhcp6/errors.js';
import { Lease6Table } from '../../bootsvc/dhcp6/lease-table.js';
import { decodeDhcp6Message, encodeDhcp6Message, unwrapRelays, type Dhcp6Message } from '../../bootsvc/dhcp6/message.js';
import { Dhcp6Option, firstOption } from '../../bootsvc/dhcp6/options.js';
import { inRange6 } from '../../bootsvc/dhcp6/pool.js';
import { unwrap6, wrapReply } from '../../bootsvc/dhcp6/request-handler.js';
import { respond6, type Responder6Context } from '../../bootsvc/dhcp6/responder.js';
import { decodeIaNa, iaAddresses } from '../../bootsvc/dhcp6/values.js';
import { ascii, bytes, captured6, duids, h16, h32, item, MAC_LINK_LOCAL, msg6, opt6, relayedSolicit, requests6 } from '../unit/bootsvc/dhcp6/fixtures.js';
import { context6, decisions6, memoryLeaseStore, SERVER_DUID, settings6 } from '../unit/bootsvc/dhcp6/responder-fixtures.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateBytes, showBytes } from './mutate-bytes.js';

const INPUTS = fuzzInputs(30_000);
const seeds: readonly Uint8Array[] = [...Object.values(requests6), relayedSolicit, ...Object.values(captured6)].map(bytes);
const validHeader = bytes(msg6(1, 0x010203));

/** Options worth splicing in: identifiers, IAs, Rapid Commit, classes, arch, relay options, truncated headers. */
const TOKENS = [
  opt6(1, duids.ll), opt6(1, duids.uuidNet), opt6(2, Buffer.from(SERVER_DUID).toString('hex')), opt6(3, h32(1) + h32(0) + h32(0)),
  opt6(3, h32(2) + h32(0) + h32(0) + opt6(5, 'fd000001000000000000000000000120' + h32(1) + h32(1))), opt6(14, ''), opt6(15, item('iPXE')),
  opt6(16, h32(343) + item('HTTPClient')), opt6(61, h16(16)), opt6(61, h16(7)), opt6(18, ascii('eth1')), opt6(79, h16(1) + '525400123456'),
  opt6(9, msg6(3, 9)), opt6(8, '0000'), '0003', '000e0001',
].map(bytes);

const contexts = (table: Lease6Table): Responder6Context[] => [
  context6(table),
  context6(table, { bootDecision: decisions6.http, settings: settings6({ rapidCommit: false, dns: ['fd00:1::53'] }) }),
  context6(table, { bootDecision: decisions6.none }),
  context6(table, { mac: undefined }),
  context6(table, { link: undefined }),
  context6(table, { unicast: true }),
];

const table = await Lease6Table.load(memoryLeaseStore([
  { mac: '52:54:00:12:34:56', address: 'fd00:1::120', state: 'bound', expiresAtMs: 9e12 },
  { mac: '02:00:00:00:00:aa', address: 'fd00:1::121', state: 'declined', expiresAtMs: 9e12 },
]));

function check(input: Uint8Array): string {
  let m: Dhcp6Message;
  try {
    m = decodeDhcp6Message(input);
  } catch (err) {
    if (!(err instanceof Dhcp6DecodeError)) throw err;
    assert.ok(err.offset >= 0 && err.offset <= input.length, `error offset ${err.offset} outside the datagram`);
    return 'rejected';
  }
  const u = unwrap6(m, `${MAC_LINK_LOCAL}%eth0`);
  if (u === undefined) return 'not-a-request';
  let replies = 0;
  for (const ctx of contexts(table)) {
    const r = respond6(u.client, ctx);
    if (r.kind !== 'reply') continue;
    replies++;
    const again = decodeDhcp6Message(encodeDhcp6Message(wrapReply(r.message, u.relays)));
    const { client } = unwrapRelays(again);
    assert.equal(client.transactionId, u.client.transactionId, 'the transaction id is echoed');
    assert.deepEqual(firstOption(client.options, Dhcp6Option.serverId), SERVER_DUID, 'replies name this server');
    for (const o of client.options) {
      if (o.code !== Dhcp6Option.iaNa) continue;
      for (const a of iaAddresses(decodeIaNa(o.value))) {
        if (a.validLifetime > 0) assert.ok(ctx.link !== undefined && inRange6(ctx.link.range, a.address), `bound ${a.address} outside the range`);
      }
    }
  }
  return replies > 0 ? 'answered' : 'decoded';
}

test('fuzz setup: the seeds decode, and those addressed to no other server are answered', () => {
  for (const hex of [...Object.values(requests6), relayedSolicit]) assert.equal(check(bytes(hex)), 'answered');
  for (const hex of Object.values(captured6)) assert.notEqual(check(bytes(hex)), 'rejected');
});

test(`fuzz dhcp6: ${INPUTS} mutated, random and header-prefixed datagrams`, async (t) => {
  const report = await runFuzz({
    name: 'dhcp6',
    seed: fuzzSeed(0x5eed8415),
    inputs: INPUTS,
    generate(dice, i) {
      if (i % 3 !== 2) return mutateBytes(dice, seeds[i % seeds.length] ?? validHeader, { seeds, tokens: TOKENS, maxBytes: 1500 });
      const body = dice.bytes(dice.int(400));
      return i % 2 === 0 ? body : Buffer.concat([validHeader, body]);
    },
    check,
    show: (b) => showBytes(b),
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  assert.ok((report.outcomes.rejected ?? 0) > 0 && (report.outcomes.answered ?? 0) > 0, 'the mutator both breaks and keeps requests');
});
