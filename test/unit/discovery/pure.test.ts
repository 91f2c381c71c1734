/**
 * Discovery's pure pieces: bounded admissions (same token per MAC, refusals counted by reason,
 * expiry), host names from serials or MACs, the report decoder (every bad field named), BMC
 * address choice, the enroll plan, and the `discovery` config section.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DiscoveryAdmissions } from '../../../agent/discovery/admissions.js';
import { bmcSecret, chooseBmcAddress, DiscoveryAnnotations, enrollPlan, EnrollError, ipmiAddressUrl } from '../../../agent/discovery/bmc-enrollment.js';
import { discoveredHostName, macHostName, serialLabel } from '../../../agent/discovery/host-name.js';
import { decodeDiscoveryReport, DiscoveryReportError, unusableBmcAddress } from '../../../agent/discovery/report.js';
import { nicsWithLldp } from '../../../agent/provisioner/local/lldp.js';
import { ConfigError, decodeConfig } from '../../../agent/config.js';
import { emptyHostStatus } from '../../../agent/host/validation.js';
import type { BareMetalHost } from '../../../agent/host/types.js';

function tokens(): () => string {
  let n = 0;
  return () => `token-${String(++n).padStart(16, '0')}`;
}

test('admissions: one token per MAC, bounded pending, refusals counted, expiry frees the slot', () => {
  const a = new DiscoveryAdmissions({ maxPending: 2, maxHosts: 5, tokenTtlMs: 1000 }, tokens());
  const first = a.admit('52:54:00:00:00:01', 0, 0);
  assert.ok(first.admitted && first.fresh);
  const again = a.admit('52:54:00:00:00:01', 10, 0);
  assert.ok(again.admitted && !again.fresh);
  assert.equal(again.admission.token, first.admission.token);
  assert.ok(a.admit('52:54:00:00:00:02', 20, 0).admitted);
  assert.deepEqual(a.admit('52:54:00:00:00:03', 30, 0), { admitted: false, reason: 'pending-full' });
  assert.deepEqual(a.admit('52:54:00:00:00:04', 30, 5), { admitted: false, reason: 'hosts-full' });
  assert.equal(a.find(first.admission.token, 500)?.mac, '52:54:00:00:00:01');
  assert.equal(a.find('forged-token-0000000', 500), undefined);
  assert.equal(a.find(first.admission.token, 1000), undefined, 'expired at its TTL');
  const s = a.stats(1000);
  assert.deepEqual(s, { pending: 1, admitted: 2, refused: { 'pending-full': 1, 'hosts-full': 1 }, expired: 1 });
  assert.ok(a.admit('52:54:00:00:00:03', 1001, 0).admitted, 'the expired slot is free again');
});

test('admissions: release ends the token and frees the slot', () => {
  const a = new DiscoveryAdmissions({ maxPending: 1, maxHosts: 5, tokenTtlMs: 1000 }, tokens());
  const first = a.admit('52:54:00:00:00:01', 0, 0);
  assert.ok(first.admitted);
  a.release('52:54:00:00:00:01');
  assert.equal(a.find(first.admission.token, 1), undefined);
  assert.ok(a.admit('52:54:00:00:00:02', 2, 0).admitted);
});

test('admissions: a storm of 5000 MACs holds at most maxPending entries', () => {
  const a = new DiscoveryAdmissions({ maxPending: 32, maxHosts: 256, tokenTtlMs: 60_000 }, tokens());
  for (let i = 0; i < 5000; i++) a.admit(`02:00:00:00:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`, i, 0);
  const s = a.stats(5000);
  assert.equal(s.pending, 32);
  assert.equal(s.refused['pending-full'], 5000 - 32);
});

test('host names: a real serial becomes a DNS-1123 label, placeholders fall back to the MAC', () => {
  assert.equal(serialLabel('  SN_1234 ABC/7 '), 'sn-1234-abc-7');
  assert.equal(serialLabel('To Be Filled By O.E.M.'), undefined);
  assert.equal(serialLabel('0000000000'), undefined);
  assert.equal(serialLabel('Not Specified'), undefined);
  assert.equal(serialLabel(''), undefined);
  assert.equal(serialLabel('x'.repeat(30) + 'y'.repeat(60))?.length, 63);
  assert.equal(macHostName('52:54:00:AB:CD:EF'), 'host-525400abcdef');
  const none = (): boolean => false;
  assert.equal(discoveredHostName('CZ1234', '52:54:00:ab:cd:ef', none), 'cz1234');
  assert.equal(discoveredHostName('CZ1234', '52:54:00:ab:cd:ef', (n) => n === 'cz1234'), 'cz1234-abcdef');
  assert.equal(discoveredHostName('CZ1234', '52:54:00:ab:cd:ef', (n) => n.startsWith('cz1234')), 'host-525400abcdef');
  assert.equal(discoveredHostName(undefined, '52:54:00:ab:cd:ef', none), 'host-525400abcdef');
  assert.equal(discoveredHostName(undefined, '52:54:00:ab:cd:ef', () => true), undefined);
  for (const name of ['cz1234', 'cz1234-abcdef', 'host-525400abcdef', serialLabel('ab'.repeat(40)) ?? '']) assert.match(name, /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
});

const okBmc = { status: 'ok', channel: 1, address: '192.0.2.50', ipv6: [], mac: '52:54:00:99:00:01', user_id: 3, username: 'rackside', password: 'A'.repeat(20) };

test('report: decodes inventory, BMC outcome and LLDP neighbours', () => {
  const r = decodeDiscoveryReport({
    inventory: { cpu: { count: 2 } },
    bmc: okBmc,
    lldp: [{ interface: 'eth0', chassis_id: '00:11:22:33:44:55', port_id: 'Ethernet1/7', system_name: 'leaf-1', vlans: [10, 20] }],
  });
  assert.equal(r.bmc.kind, 'ok');
  assert.deepEqual(r.lldp, [{ interface: 'eth0', chassisId: '00:11:22:33:44:55', portId: 'Ethernet1/7', systemName: 'leaf-1', vlans: [10, 20] }]);
  assert.deepEqual(decodeDiscoveryReport({ inventory: {} }).bmc.kind, 'none');
  assert.deepEqual(decodeDiscoveryReport({ inventory: {}, bmc: { status: 'error', channel: 1, message: 'Set User Password failed: insufficient privilege\n' } }).bmc,
    { kind: 'error', channel: 1, message: 'Set User Password failed: insufficient privilege' });
});

test('report: each bad field is named', () => {
  const cases: [unknown, string][] = [
    [[], 'body'],
    [{}, 'inventory'],
    [{ inventory: {}, bmc: { ...okBmc, password: 'short' } }, 'bmc.password'],
    [{ inventory: {}, bmc: { ...okBmc, password: 'x'.repeat(21) } }, 'bmc.password'],
    [{ inventory: {}, bmc: { ...okBmc, username: 'has space' } }, 'bmc.username'],
    [{ inventory: {}, bmc: { ...okBmc, address: '300.1.1.1' } }, 'bmc.address'],
    [{ inventory: {}, bmc: { ...okBmc, channel: 12 } }, 'bmc.channel'],
    [{ inventory: {}, bmc: { ...okBmc, status: 'maybe' } }, 'bmc.status'],
    [{ inventory: {}, bmc: { ...okBmc, ipv6: ['fe80::zz'] } }, 'bmc.ipv6[0]'],
    [{ inventory: {}, lldp: [{ interface: 'eth0', vlans: [5000] }] }, 'lldp[0].vlans[0]'],
    [{ inventory: {}, lldp: [{}] }, 'lldp[0].interface'],
  ];
  for (const [body, field] of cases) {
    assert.throws(() => decodeDiscoveryReport(body), (e: unknown) => e instanceof DiscoveryReportError && e.field === field, field);
  }
  let deep: Record<string, unknown> = {};
  const root = deep;
  for (let i = 0; i < 40; i++) { const next = {}; deep.x = next; deep = next; }
  assert.throws(() => decodeDiscoveryReport({ inventory: root }), (e: unknown) => e instanceof DiscoveryReportError && e.field === 'inventory');
});

test('BMC addresses: unset, link-local and multicast are unusable; IPv6 gets brackets', () => {
  for (const a of ['0.0.0.0', '169.254.3.4', '224.0.0.1', '255.255.255.255', '::', 'fe80::1', 'ff02::1']) assert.notEqual(unusableBmcAddress(a), undefined, a);
  for (const a of ['192.0.2.5', '10.1.2.3', '2001:db8::5', '127.0.0.1']) assert.equal(unusableBmcAddress(a), undefined, a);
  assert.equal(ipmiAddressUrl('2001:db8::5'), 'ipmi://[2001:db8::5]');
  const base = { kind: 'ok' as const, channel: 1, username: 'u', password: 'p'.repeat(16) };
  assert.deepEqual(chooseBmcAddress({ ...base, address: '192.0.2.5', ipv6: [] }), { url: 'ipmi://192.0.2.5' });
  assert.deepEqual(chooseBmcAddress({ ...base, address: '0.0.0.0', ipv6: ['fe80::1', '2001:db8::5'] }), { url: 'ipmi://[2001:db8::5]' });
  assert.deepEqual(chooseBmcAddress({ ...base, address: '0.0.0.0', ipv6: [] }), { unusable: 'the BMC has no address (0.0.0.0)' });
});

test('LLDP neighbours land on their NICs in metal3 shape', () => {
  const nics = nicsWithLldp([{ name: 'eth0' }, { name: 'eth1', lldp: { switchID: 'kept' } }], [
    { interface: 'eth0', chassisId: 'c0', portId: 'p7', systemName: 'leaf-1', vlans: [10] },
    { interface: 'eth1', chassisId: 'c1', vlans: [] },
  ]);
  assert.deepEqual(nics, [{ name: 'eth0', lldp: { switchID: 'c0', portID: 'p7', switchSystemName: 'leaf-1' }, vlans: [{ id: 10 }] }, { name: 'eth1', lldp: { switchID: 'kept' } }]);
});

function host(annotations: Record<string, string> = {}): BareMetalHost {
  const status = emptyHostStatus();
  status.provisioning.state = 'unmanaged';
  return {
    apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost',
    metadata: { name: 'cz1234', namespace: 'default', uid: 'u', resourceVersion: '7', generation: 1, creationTimestamp: '', annotations },
    spec: { bootMACAddress: '52:54:00:ab:cd:ef', online: false }, status,
  };
}

test('enroll plan: the proposed BMC, or the given one with a new Secret; never over an existing BMC', () => {
  const proposed = host({ [DiscoveryAnnotations.proposedBmcAddress]: 'ipmi://192.0.2.5', [DiscoveryAnnotations.proposedBmcCredentials]: 'cz1234-bmc-secret', keep: 'x' });
  const p = enrollPlan(proposed, {});
  assert.deepEqual(p.host.spec.bmc, { address: 'ipmi://192.0.2.5', credentialsName: 'cz1234-bmc-secret' });
  assert.deepEqual(p.host.metadata.annotations, { keep: 'x' });
  assert.equal(p.secret, undefined);
  assert.equal(proposed.spec.bmc, undefined, 'the stored copy is untouched');
  const given = enrollPlan(host(), { address: '192.0.2.9', username: 'admin', password: 'secret-password-1' });
  assert.equal(given.host.spec.bmc?.address, 'ipmi://192.0.2.9');
  assert.equal(Buffer.from(given.secret?.data.password ?? '', 'base64').toString(), 'secret-password-1');
  assert.throws(() => enrollPlan(host(), {}), (e: unknown) => e instanceof EnrollError && e.field === 'bmc');
  assert.throws(() => enrollPlan(host(), { address: '192.0.2.9' }), (e: unknown) => e instanceof EnrollError && e.field === 'username');
  assert.throws(() => enrollPlan(p.host, {}), (e: unknown) => e instanceof EnrollError && e.field === 'spec.bmc');
  assert.equal(bmcSecret('default', 'h', 'u', 'p').metadata.name, 'h-bmc-secret');
});

test('config: discovery defaults, values, and a section beside unknownHosts: ignore is an error', () => {
  const defaults = { agentId: 'rack-a' };
  const on = decodeConfig({ dhcp: { unknownHosts: 'discover' }, discovery: { approve: 'manual', enrollBMC: true, maxPending: 4, maxHosts: 9, tokenTtlSeconds: 600, namespace: 'rack-a' } }, defaults);
  assert.deepEqual(on.discovery, { approve: 'manual', enrollBMC: true, maxPending: 4, maxHosts: 9, tokenTtlSeconds: 600, namespace: 'rack-a' });
  assert.throws(() => decodeConfig({ discovery: { enrollBMC: true } }, defaults), (e: unknown) => e instanceof ConfigError && e.problems.some((p) => p.path === 'discovery'));
  assert.throws(() => decodeConfig({ dhcp: { unknownHosts: 'discover' }, discovery: { enrollBMC: 'yes', maxPending: 0, approve: 'later', namespace: 'Bad_NS' } }, defaults), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.deepEqual(e.problems.map((p) => p.path).sort(), ['discovery.approve', 'discovery.enrollBMC', 'discovery.maxPending', 'discovery.namespace']);
    return true;
  });
});
