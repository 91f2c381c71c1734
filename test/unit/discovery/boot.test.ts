/**
 * The discovery boot seam: an admitted unknown MAC gets the ramdisk in discovery mode with its
 * token; a refused one gets no target, which the boot renderer turns into "nothing to do" and
 * the DHCP responder into silence (`discovery-refused`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DiscoveryAdmissions } from '../../../agent/discovery/admissions.js';
import { DiscoveryBoot, DISCOVERY_MODE_PARAM, ENROLL_BMC_PARAM } from '../../../agent/discovery/discovery-boot.js';
import { resolveBootTarget } from '../../../bootsvc/ipxe/boot-renderer.js';

const ramdisk = { kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://192.0.2.1:8081', extraKernelParams: ['nomodeset'] };

test('an admitted MAC boots the discovery ramdisk with its token; a refused one gets nothing', async () => {
  const refused: string[] = [];
  const admissions = new DiscoveryAdmissions({ maxPending: 1, maxHosts: 10, tokenTtlMs: 60_000 }, () => 'tok-0123456789abcdef');
  const boot = new DiscoveryBoot({ admissions, discoveredCount: () => Promise.resolve(0), nowMs: () => 0, ramdisk, enrollBMC: true, onRefused: (mac, reason) => refused.push(`${mac} ${reason}`) });
  const target = await boot.target({ mac: '52:54:00:AA:BB:CC' });
  assert.deepEqual(target?.plan, {
    kind: 'ramdisk', purpose: 'discovery', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://192.0.2.1:8081',
    token: 'tok-0123456789abcdef', extraKernelParams: ['nomodeset', DISCOVERY_MODE_PARAM, ENROLL_BMC_PARAM],
  });
  assert.equal(admissions.find('tok-0123456789abcdef', 1)?.mac, '52:54:00:aa:bb:cc');
  assert.equal(await boot.target({ mac: '52:54:00:00:00:01' }), undefined);
  assert.deepEqual(refused, ['52:54:00:00:00:01 pending-full']);
  const rendered = await resolveBootTarget('52:54:00:00:00:01', { plans: { target: () => Promise.resolve(undefined) }, baseUrl: 'http://x', unknownHosts: 'discover', discoveryLookup: boot });
  assert.equal(rendered.plan.kind, 'none');
  const admitted = await resolveBootTarget('52:54:00:aa:bb:cc', { plans: { target: () => Promise.resolve(undefined) }, baseUrl: 'http://x', unknownHosts: 'discover', discoveryLookup: boot });
  assert.equal(admitted.plan.kind, 'ramdisk');
});
