import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostBootKind, hostBootTarget, hostRamdiskArch, type RamdiskIntent } from '../../../agent/boot/host-boot-plan.js';
import type { ClientArch } from '../../../bootsvc/index.js';
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

test('decodeRamdiskIntent: a ramdisk boot whose ISO URI the BMC holds is an address-only DHCP answer (no boot file); other boots keep theirs', () => {
  const held = decodeRamdiskIntent({ boot: 'ramdisk', token: 't', httpBootUri: 'http://10.0.0.1:8081/ramdisk/v1/vmedia/a.iso' });
  assert.equal(held.boot, 'none');
  assert.equal(held.token, 't', 'the ramdisk started from the ISO still reports with its token');
  assert.match(held.message ?? '', /Boot\.HttpBootUri/);
  assert.equal(decodeRamdiskIntent({ boot: 'ramdisk', token: 't' }).boot, 'ramdisk', 'a BMC without the property: DHCP names the boot file');
  assert.equal(decodeRamdiskIntent({ boot: 'local-disk', httpBootUri: 'http://x/a.iso' }).boot, 'local-disk', 'a stale URI does not outlive its ramdisk boot');
});

const archCases: { name: string; spec?: string; dhcp?: ClientArch; inspected?: string; want: string | undefined }[] = [
  { name: 'nothing known', want: undefined },
  { name: 'spec.architecture aarch64', spec: 'aarch64', dhcp: 'x86_64', inspected: 'x86_64', want: 'arm64' },
  { name: 'spec.architecture x86_64 wins over an arm64 DHCP client', spec: 'x86_64', dhcp: 'arm64', want: 'amd64' },
  { name: 'DHCP option 93 arm64 (11/19) before inspection', dhcp: 'arm64', inspected: 'x86_64', want: 'arm64' },
  { name: 'DHCP x86 BIOS (0) is an amd64 server', dhcp: 'x86', want: 'amd64' },
  { name: 'an unknown DHCP architecture leaves it to inspection', dhcp: 'unknown', inspected: 'aarch64', want: 'arm64' },
  { name: 'inspection alone', inspected: 'x86_64', want: 'amd64' },
  { name: 'a spec architecture no ramdisk exists for', spec: 'ppc64le', dhcp: 'arm64', want: undefined },
];
for (const c of archCases) {
  test(`hostRamdiskArch: ${c.name} → ${c.want ?? 'none'}`, () => {
    const host = sampleHost('node-0', {
      spec: c.spec === undefined ? {} : { architecture: c.spec },
      ...(c.inspected === undefined ? {} : { status: { hardware: { cpu: { arch: c.inspected, model: '', clockMegahertz: 0, flags: [], count: 1 } } } }),
    } as Parameters<typeof sampleHost>[1]);
    assert.equal(hostRamdiskArch(host, c.dhcp), c.want);
  });
}

test('a ramdisk target gets the ramdisk of the host\'s architecture; the head node\'s URLs stay for its own and unknown ones', () => {
  const withArm = { ...defaults, byArch: { arm64: { kernel: '/ramdisk/arm64/vmlinuz', initrds: ['/ramdisk/arm64/initrd'] } } };
  const inspecting = { provisioning: { state: 'inspecting' as const, ID: '', image: { url: '' } } };
  const arm = sampleHost('node-a', { spec: { architecture: 'aarch64' }, status: inspecting });
  const plan = hostBootTarget(arm, { token: 't' }, withArm).plan;
  assert.ok(plan.kind === 'ramdisk');
  assert.equal(plan.kernel, '/ramdisk/arm64/vmlinuz');
  assert.deepEqual(plan.initrds, ['/ramdisk/arm64/initrd']);
  const unknown = sampleHost('node-u', { status: inspecting });
  const byDhcp = hostBootTarget(unknown, { token: 't' }, withArm, 'arm64').plan;
  assert.ok(byDhcp.kind === 'ramdisk' && byDhcp.kernel === '/ramdisk/arm64/vmlinuz', 'DHCP client architecture 11 → arm64');
  const amd = hostBootTarget(unknown, { token: 't' }, withArm, 'x86_64').plan;
  assert.ok(amd.kind === 'ramdisk' && amd.kernel === '/ramdisk/vmlinuz' && amd.initrds[0] === '/ramdisk/initrd');
});
