import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BootLookup, BootTargetQuery } from '../../../../bootsvc/boot-lookup.js';
import type { BootTarget, RamdiskPlan } from '../../../../bootsvc/ipxe/boot-plan.js';
import { rebasedTarget, renderBootFile } from '../../../../bootsvc/ipxe/boot-renderer.js';

const BASE = 'http://10.0.0.1:8081';
const KNOWN = '52:54:00:00:00:01';
const UNKNOWN = '52:54:00:00:00:99';
const DISCOVERY: RamdiskPlan = { kind: 'ramdisk', purpose: 'discovery', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: BASE };

const plans: BootLookup = {
  target: ({ mac }: BootTargetQuery): Promise<BootTarget | undefined> =>
    Promise.resolve(mac === KNOWN ? { plan: { kind: 'local-disk' }, host: 'node-0' } : undefined),
};

test('a known host gets its plan, named in the script', async () => {
  const file = await renderBootFile({ kind: 'ipxe-script', mac: KNOWN }, { plans, baseUrl: BASE });
  assert.equal(file.planKind, 'local-disk');
  assert.equal(file.host, 'node-0');
  assert.match(file.body, /node-0 \(52:54:00:00:00:01\): booting from the local disk/);
});

test('unknownHosts ignore: "nothing to do", saying why', async () => {
  const file = await renderBootFile({ kind: 'ipxe-script', mac: UNKNOWN }, { plans, baseUrl: BASE, unknownHosts: 'ignore' }, 3);
  assert.equal(file.planKind, 'none');
  assert.match(file.body, /not a known host/);
  assert.match(file.body, /attempt=4/);
});

test('unknownHosts discover: the discovery ramdisk (iPXE and GRUB)', async () => {
  const options = { plans, baseUrl: BASE, unknownHosts: 'discover' as const, discovery: DISCOVERY };
  const ipxe = await renderBootFile({ kind: 'ipxe-script', mac: UNKNOWN }, options);
  assert.equal(ipxe.planKind, 'ramdisk');
  assert.match(ipxe.body, /loading the discovery ramdisk/);
  const grub = await renderBootFile({ kind: 'grub-config', mac: UNKNOWN }, options);
  assert.match(grub.body, /^\s*if linux \/ramdisk\/vmlinuz /m);
});

test('discover without a discovery ramdisk explains itself', async () => {
  const file = await renderBootFile({ kind: 'grub-config', mac: UNKNOWN }, { plans, baseUrl: BASE, unknownHosts: 'discover' });
  assert.match(file.body, /no discovery ramdisk is configured/);
});

test('entry files need no lookup', async () => {
  const failing: BootLookup = { target: () => Promise.reject(new Error('store down')) };
  assert.match((await renderBootFile({ kind: 'ipxe-entry' }, { plans: failing, baseUrl: BASE })).body, /netX\/mac:hexhyp/);
  assert.match((await renderBootFile({ kind: 'grub-entry' }, { plans: failing, baseUrl: BASE })).body, /net_default_mac/);
  await assert.rejects(renderBootFile({ kind: 'ipxe-script', mac: KNOWN }, { plans: failing, baseUrl: BASE }), /store down/);
});

test('rebaseAgentUrl: an IPv6 client gets the bracketed IPv6 callback URL in iPXE scripts and GRUB configs', async () => {
  const rebase = { from: BASE, to: 'http://[fd00:1::1]:8081' };
  const options = { plans, baseUrl: 'http://[fd00:1::1]:8081', unknownHosts: 'discover' as const, discovery: DISCOVERY, rebaseAgentUrl: rebase };
  const ipxe = await renderBootFile({ kind: 'ipxe-script', mac: UNKNOWN }, options);
  assert.match(ipxe.body, / rackside\.url=http:\/\/\[fd00:1::1\]:8081 /);
  const grub = await renderBootFile({ kind: 'grub-config', mac: UNKNOWN }, options);
  assert.match(grub.body, / 'rackside\.url=http:\/\/\[fd00:1::1\]:8081' /);
  assert.ok(!grub.body.includes('10.0.0.1') && !ipxe.body.includes('10.0.0.1'));
});

test('rebasedTarget: only a ramdisk plan whose agent URL is on the rebased origin changes', () => {
  const rebase = { rebaseAgentUrl: { from: `${BASE}/`, to: 'http://[fd00:1::1]:8081' } };
  assert.equal((rebasedTarget({ plan: DISCOVERY }, rebase).plan as RamdiskPlan).agentUrl, 'http://[fd00:1::1]:8081');
  assert.equal((rebasedTarget({ plan: { ...DISCOVERY, agentUrl: `${BASE}/sub` } }, rebase).plan as RamdiskPlan).agentUrl, 'http://[fd00:1::1]:8081/sub');
  // Another origin (an operator's own URL, a port that merely starts alike) is kept.
  assert.equal((rebasedTarget({ plan: { ...DISCOVERY, agentUrl: 'http://10.0.0.1:80812' } }, rebase).plan as RamdiskPlan).agentUrl, 'http://10.0.0.1:80812');
  assert.equal((rebasedTarget({ plan: DISCOVERY }, {}).plan as RamdiskPlan).agentUrl, BASE);
  assert.deepEqual(rebasedTarget({ plan: { kind: 'local-disk' } }, rebase), { plan: { kind: 'local-disk' } });
});
