/**
 * The doctor's rogue-DHCPv6 probe codec (bootsvc/dhcp6/probe.ts, checked with bootsvc's own
 * DHCPv6 decoder and encoder) and its verdict (agent/doctor/checks-dhcp6.ts), as a table.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfigYaml, type Config } from '../../../agent/config.js';
import { checkDhcp6Servers } from '../../../agent/doctor/checks-dhcp6.js';
import { decodeProbeAdvertise, duidLlHex, encodeProbeSolicit } from '../../../bootsvc/dhcp6/probe.js';
import type { CheckResult, Dhcp6Probe } from '../../../agent/doctor/types.js';
import { decodeDhcp6Message, encodeDhcp6Message } from '../../../bootsvc/dhcp6/message.js';
import { Dhcp6MessageType, Dhcp6Option } from '../../../bootsvc/dhcp6/options.js';
import { iaAddressOption, iaNaOption } from '../../../bootsvc/dhcp6/values.js';

const config = (yaml: string): Config => parseConfigYaml(yaml, 'test.yaml', { agentId: 'rack-t' });
const V4 = config('provisioning: { interface: eth1, address: 192.0.2.1/24 }\n');
const FULL = config('provisioning: { interface: eth1, address: "fd00:1::1/64" }\ndhcp6: { mode: full, range: "fd00:1::100-fd00:1::1ff" }\n');
const OFF = config('provisioning: { interface: eth1, address: [192.0.2.1/24, "fd00:1::1/64"] }\n');
const OURS = duidLlHex('52:54:00:12:34:56');

test('the probe Solicit: DUID-LL of the MAC, one IA_NA, elapsed time 0, no Rapid Commit', () => {
  const m = decodeDhcp6Message(encodeProbeSolicit('52:54:00:12:34:56', 0xabcdef));
  assert.ok(m.kind === 'client');
  assert.equal(m.type, Dhcp6MessageType.solicit);
  assert.equal(m.transactionId, 0xabcdef);
  assert.deepEqual(m.options.map((o) => o.code), [Dhcp6Option.clientId, Dhcp6Option.iaNa, Dhcp6Option.elapsedTime]);
  assert.equal(Buffer.from(m.options[0]?.value ?? []).toString('hex'), '00030001525400123456');
  assert.equal(OURS, '00030001525400123456');
});

function advertise(xid: number, type: number = Dhcp6MessageType.advertise, withServer = true): Buffer {
  return encodeDhcp6Message({
    kind: 'client', type, transactionId: xid,
    options: [
      ...(withServer ? [{ code: Dhcp6Option.serverId, value: Uint8Array.from(Buffer.from('000100012a2b2c2d020000000001', 'hex')) }] : []),
      iaNaOption({ iaid: 1, t1: 0, t2: 0, options: [iaAddressOption({ address: 'fd00:1::2a', preferredLifetime: 10, validLifetime: 20, options: [] })] }),
    ],
  });
}

test('decodeProbeAdvertise: the server DUID, source and address of an Advertise for our transaction only', () => {
  assert.deepEqual(decodeProbeAdvertise(advertise(7), 7, 'fe80::2%eth1'), { serverDuid: '000100012a2b2c2d020000000001', sourceAddress: 'fe80::2%eth1', offeredAddress: 'fd00:1::2a' });
  assert.equal(decodeProbeAdvertise(advertise(8), 7, 'fe80::2%eth1'), undefined, 'another transaction');
  assert.equal(decodeProbeAdvertise(advertise(7, Dhcp6MessageType.reply), 7, 'fe80::2%eth1'), undefined, 'not an Advertise');
  assert.equal(decodeProbeAdvertise(advertise(7, Dhcp6MessageType.advertise, false), 7, 'fe80::2%eth1'), undefined, 'no server identifier');
  assert.equal(decodeProbeAdvertise(Uint8Array.of(2, 0, 0, 7, 0, 2, 0, 9), 7, 'fe80::2%eth1'), undefined, 'malformed');
});

const rogue = { serverDuid: '000100012a2b2c2d020000000001', sourceAddress: 'fe80::2%eth1', offeredAddress: 'fd00:1::2a' };
const own = { serverDuid: OURS, sourceAddress: 'fe80::5054:ff:fe12:3456%eth1', offeredAddress: 'fd00:1::100' };
const done = (advertises: typeof rogue[]): Dhcp6Probe => ({ state: 'done', interface: 'eth1', listenMs: 2000, advertises });

const cases: Record<string, [Config, Dhcp6Probe, { status: CheckResult['status']; detail: RegExp; fix?: RegExp } | undefined]> = {
  'IPv4-only config: no line': [V4, done([rogue]), undefined],
  'nobody answered': [FULL, done([]), { status: 'ok', detail: /^no other DHCPv6 server answered a Solicit on eth1 within 2\.0s$/ }],
  'only rackside answered': [FULL, done([own, own]), { status: 'ok', detail: /rackside itself answered/ }],
  'a rogue server with dhcp6 full fails, named by its link-local address': [FULL, done([own, rogue, rogue]), {
    status: 'fail', detail: /^rogue DHCPv6 on eth1: server fe80::2 \(DUID 000100012a2b2c2d020000000001\) advertised fd00:1::2a$/, fix: /^stop the DHCPv6 server at fe80::2 on this segment$/,
  }],
  'another server with dhcp6 off is expected': [OFF, done([rogue]), { status: 'ok', detail: /^expected with dhcp6\.mode off: server fe80::2/ }],
  'probe not run': [FULL, { state: 'not-run', reason: 'eth1 has no usable IPv6 link-local address' }, { status: 'skip', detail: /no usable IPv6 link-local/ }],
  'probe failed': [FULL, { state: 'error', error: 'eth1: EACCES' }, { status: 'warn', detail: /Solicit probe failed: eth1: EACCES/, fix: /as root/ }],
};
for (const [name, [c, probe, want]] of Object.entries(cases)) {
  test(`checkDhcp6Servers: ${name}`, () => {
    const got = checkDhcp6Servers(c, probe, OURS);
    if (want === undefined) {
      assert.equal(got, undefined);
      return;
    }
    assert.ok(got !== undefined);
    assert.equal(got.status, want.status, got.detail);
    assert.match(got.detail, want.detail);
    if (want.fix !== undefined) assert.match(got.fix, want.fix);
  });
}
