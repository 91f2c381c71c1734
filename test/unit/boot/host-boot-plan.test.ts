import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostBootKind, hostBootTarget, type RamdiskIntent } from '../../../agent/boot/host-boot-plan.js';
import { decodeRamdiskIntent } from '../../../agent/provisioner/local/node.js';
import type { ProvisioningState } from '../../../agent/host/types.js';
import { sampleHost } from '../../helpers/fake-backend.js';

const defaults = { agentUrl: 'http://10.0.0.1:8081', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], extraKernelParams: ['ipa=1'] };

const byState: Record<string, [ProvisioningState, string]> = {
  'inspecting → ramdisk': ['inspecting', 'ramdisk'],
  'preparing → ramdisk': ['preparing', 'ramdisk'],
  'provisioning → ramdisk': ['provisioning', 'ramdisk'],
  'deprovisioning → ramdisk': ['deprovisioning', 'ramdisk'],
  'provisioned → local disk': ['provisioned', 'local-disk'],
  'externally provisioned → local disk': ['externally provisioned', 'local-disk'],
  'available → none': ['available', 'none'],
  'registering → none': ['registering', 'none'],
  'deleting → none': ['deleting', 'none'],
  'unset → none': ['', 'none'],
};
for (const [name, [state, kind]] of Object.entries(byState)) {
  test(`by state: ${name}`, () => {
    const host = sampleHost('node-0', { status: { provisioning: { state, ID: '', image: { url: '' } } } });
    assert.equal(hostBootKind(host, {}), kind);
  });
}

test('the provisioner\'s intent wins over the state; detached hosts are left alone', () => {
  const provisioned = sampleHost('node-0', { status: { provisioning: { state: 'provisioned', ID: '', image: { url: '' } } } });
  assert.equal(hostBootKind(provisioned, { boot: 'ramdisk' }), 'ramdisk');
  const detached = sampleHost('node-0', { status: { operationalStatus: 'detached', provisioning: { state: 'inspecting', ID: '', image: { url: '' } } } });
  assert.equal(hostBootKind(detached, {}), 'none');
});

test('a ramdisk target: defaults, intent overrides, token, Secure Boot from bootMode', () => {
  const host = sampleHost('node-0', { spec: { bootMode: 'UEFISecureBoot' }, status: { provisioning: { state: 'inspecting', ID: '', image: { url: '' } } } });
  const intent: RamdiskIntent = { token: 'abcdefghijklmnopqrst', initrdUrl: ['/ramdisk/initrd', '/ramdisk/hosts/node-0.cpio'], extraKernelParams: ['debug'] };
  assert.deepEqual(hostBootTarget(host, intent, defaults), {
    host: 'node-0',
    secureBoot: true,
    plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd', '/ramdisk/hosts/node-0.cpio'], agentUrl: 'http://10.0.0.1:8081', token: 'abcdefghijklmnopqrst', extraKernelParams: ['ipa=1', 'debug'] },
  });
});

test('live ISO and none targets', () => {
  const host = sampleHost('node-0');
  assert.deepEqual(hostBootTarget(host, { boot: 'live-iso', isoUrl: 'http://x/y.iso' }, defaults).plan, { kind: 'live-iso', iso: 'http://x/y.iso' });
  assert.equal(hostBootTarget(host, { boot: 'live-iso' }, defaults).plan.kind, 'none');
  assert.match(JSON.stringify(hostBootTarget(host, {}, defaults).plan), /nothing to boot in state \\"available\\"/);
  assert.equal(hostBootTarget(host, {}, defaults).secureBoot, false);
});

test('decoding a nodes entry keeps the intent fields and ignores the rest', () => {
  assert.deepEqual(decodeRamdiskIntent({ boot: 'ramdisk', kernelUrl: 'http://k', initrdUrl: 'http://i', token: 't', extraKernelParams: ['a', 3, ''], provisionerState: { x: 1 } }), {
    boot: 'ramdisk', kernelUrl: 'http://k', initrdUrl: ['http://i'], token: 't', extraKernelParams: ['a'],
  });
  assert.deepEqual(decodeRamdiskIntent({ boot: 'reboot', token: 42 }), {});
  assert.deepEqual(decodeRamdiskIntent(undefined), {});
  assert.deepEqual(decodeRamdiskIntent(['boot']), {});
});
