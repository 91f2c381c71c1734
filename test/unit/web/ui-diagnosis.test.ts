/**
 * The status page's diagnosis rules (agent/web/ui/diagnosis.ts), table-tested: each rule fires
 * on its situation, stays silent when a later success explains it away, and names the cause.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BareMetalHost, BareMetalHostStatus } from '../../../agent/host/types.js';
import type { StoredEvent } from '../../../agent/store/types.js';
import { bootFileArch, diagnoseHost, formatIsoSeconds, type Finding } from '../../../agent/web/ui/diagnosis.js';
import { sampleHost } from '../../helpers/fake-backend.js';

const T0 = Date.parse('2026-11-30T10:00:00Z');
const MAC = '52:54:00:00:00:01';
let seq = 0;

/** An event `offsetMs` after T0. */
function ev(offsetMs: number, source: string, reason: string, data: Record<string, unknown> = {}, extra: Partial<StoredEvent> = {}): StoredEvent {
  seq += 1;
  return { seq, time: new Date(T0 + offsetMs).toISOString(), type: 'Normal', reason, message: `${reason} message`, source, mac: MAC, data, ...extra };
}
const dhcp = (ms: number, reason: string, data: Record<string, unknown> = {}): StoredEvent => ev(ms, 'bootsvc:dhcp', reason, data);
const tftp = (ms: number, reason: string, data: Record<string, unknown> = {}): StoredEvent => ev(ms, 'bootsvc:tftp', reason, data, reason === 'TFTPTransferError' ? { type: 'Warning' } : {});
const http = (ms: number, path: string, status = 200, completed = true): StoredEvent => ev(ms, 'bootsvc:http', 'HTTPRequest', { method: 'GET', path, status, bytes: 1000, durationMs: 50, completed });
const ramdisk = (ms: number): StoredEvent => ev(ms, 'bootsvc:ramdisk', 'RamdiskHeartbeat', { type: 'heartbeat' });
const bmc = (ms: number, ok: boolean, detail?: string): StoredEvent => ev(ms, 'bmc', ok ? 'BMCCall' : 'BMCCallFailed', { call: 'power-on', ok, ...(detail === undefined ? {} : { detail }) }, ok ? {} : { type: 'Warning' });
const stateChange = (ms: number, from: string, to: string): StoredEvent => ev(ms, 'host-controller', 'ProvisioningStateChanged', {}, { message: `${from} → ${to}`, host: 'node-1' });

function host(status: Partial<BareMetalHostStatus> = {}): BareMetalHost {
  return sampleHost('node-1', { status });
}

interface Case {
  events?: StoredEvent[];
  host?: BareMetalHost;
  /** Milliseconds after T0. */
  nowMs: number;
  /** Rules expected to fire, in order. */
  rules: string[];
  /** Text the first finding's title must contain. */
  title?: RegExp;
  detail?: RegExp;
}

const cases: Record<string, Case> = {
  'three offers and no request: another DHCP server?': {
    events: [dhcp(0, 'DHCPDiscover', { xid: 1 }), dhcp(10, 'DHCPOffer', { xid: 1 }), dhcp(4000, 'DHCPDiscover', { xid: 2 }), dhcp(4010, 'DHCPOffer', { xid: 2 }), dhcp(8000, 'DHCPOffer', { xid: 3 })],
    nowMs: 8100, rules: ['dhcp-offer-no-request'], title: /^Offers sent, no REQUEST: another DHCP server answered\?$/, detail: /3 DHCPOFFERs/,
  },
  'one offer, unanswered for 10 s': {
    events: [dhcp(0, 'DHCPDiscover'), dhcp(5, 'DHCPOffer')], nowMs: 10_100, rules: ['dhcp-offer-no-request'], detail: /1 DHCPOFFER sent/,
  },
  'one offer just sent: too early to say': {
    events: [dhcp(0, 'DHCPDiscover'), dhcp(5, 'DHCPOffer')], nowMs: 2000, rules: [],
  },
  'client requested another server: said at once': {
    events: [dhcp(0, 'DHCPDiscover'), dhcp(5, 'DHCPOffer'), dhcp(900, 'DHCPIgnored', { detail: 'other-server' })], nowMs: 1000,
    rules: ['dhcp-offer-no-request'], detail: /requested an address from another server/,
  },
  'offer then request then ack: healthy': {
    events: [dhcp(0, 'DHCPDiscover', { xid: 7 }), dhcp(5, 'DHCPOffer', { xid: 7 }), dhcp(900, 'DHCPRequest', { xid: 7 }), dhcp(905, 'DHCPAck', { xid: 7 })], nowMs: 600_000, rules: [],
  },
  'arm64 client offered the x86 iPXE binary': {
    events: [dhcp(0, 'DHCPDiscover', { xid: 9, arch: 'arm64', archType: 11 }), dhcp(5, 'DHCPOffer', { xid: 9, bootFile: 'ipxe.efi' }), dhcp(200, 'DHCPRequest', { xid: 9 })],
    nowMs: 1000, rules: ['arch-mismatch'], title: /^arm64 client was offered an x86 binary$/, detail: /ipxe\.efi/,
  },
  'arm64 arch known only from option 93 number': {
    events: [dhcp(0, 'DHCPDiscover', { xid: 9, archType: 11 }), dhcp(5, 'DHCPOffer', { xid: 9, bootFile: 'undionly.kpxe' }), dhcp(10, 'DHCPRequest', { xid: 9 })],
    nowMs: 1000, rules: ['arch-mismatch'], title: /arm64 client was offered an x86 binary/,
  },
  'x86 client offered an arm64 shim': {
    events: [dhcp(0, 'DHCPDiscover', { xid: 4, arch: 'x86_64' }), dhcp(5, 'DHCPOffer', { xid: 4, bootFile: 'shimaa64.efi' }), dhcp(10, 'DHCPRequest', { xid: 4 })],
    nowMs: 1000, rules: ['arch-mismatch'], title: /^x86 client was offered an arm64 binary$/,
  },
  'arm64 client offered the arm64 shim: fine': {
    events: [dhcp(0, 'DHCPDiscover', { xid: 5, arch: 'arm64' }), dhcp(5, 'DHCPOffer', { xid: 5, bootFile: 'shimaa64.efi' }), dhcp(10, 'DHCPRequest', { xid: 5 })], nowMs: 1000, rules: [],
  },
  'kernel and initrd fetched, ramdisk silent for 6 min': {
    events: [http(0, '/boot/52:54:00:00:00:01.ipxe'), http(1000, '/images/vmlinuz'), http(3000, '/images/initramfs.cpio.gz')],
    nowMs: 3000 + 6 * 60_000, rules: ['ramdisk-silent'], title: /^Kernel and initrd fetched, no ramdisk heartbeat for 6 min 00 s: check the console \/ kernel arguments$/,
  },
  'kernel and initrd fetched 2 min ago: still booting': {
    events: [http(1000, '/images/vmlinuz'), http(3000, '/images/initrd')], nowMs: 123_000, rules: [],
  },
  'ramdisk heartbeat after the fetch: fine': {
    events: [http(1000, '/images/vmlinuz'), http(3000, '/images/initrd'), ramdisk(60_000)], nowMs: 3_600_000, rules: [],
  },
  'initrd fetch failed (404): no ramdisk rule': {
    events: [http(1000, '/images/vmlinuz'), http(3000, '/images/initrd', 404)], nowMs: 3_600_000, rules: [],
  },
  'unified kernel image fetched over HTTPS, ramdisk silent for 6 min': {
    events: [http(1000, '/uki/52-54-00-00-00-01.efi')], nowMs: 1000 + 6 * 60_000, rules: ['ramdisk-silent'],
    title: /^Unified kernel image fetched, no ramdisk heartbeat for 6 min 00 s/, detail: /no curl or no CA/,
  },
  'ipxe.efi over HTTP is no unified image': {
    events: [http(1000, '/ipxe.efi')], nowMs: 1000 + 6 * 60_000, rules: [],
  },
  'kernel and initrd over TFTP (GRUB chain) count too': {
    events: [tftp(1000, 'TFTPTransferDone', { file: 'linux', bytes: 9000 }), tftp(2000, 'TFTPTransferDone', { file: 'initrd.img', bytes: 9000 })],
    nowMs: 2000 + 10 * 60_000, rules: ['ramdisk-silent'],
  },
  'BMC calls failing since 10:00:05': {
    events: [bmc(0, true), bmc(5000, false, 'connect ETIMEDOUT 10.0.0.9:443'), bmc(65_000, false, 'connect ETIMEDOUT 10.0.0.9:443')],
    nowMs: 70_000, rules: ['bmc-unreachable'], title: /^BMC unreachable since 2026-11-30 10:00:05 UTC$/, detail: /2 BMC calls failed.*ETIMEDOUT/,
  },
  'BMC failed once then answered: fine': {
    events: [bmc(0, false, 'timeout'), bmc(5000, true)], nowMs: 70_000, rules: [],
  },
  'BMC unreachable from the host status alone': {
    host: host({ operationalStatus: 'error', errorType: 'power management error', errorMessage: 'dial tcp 10.0.0.9:623: connection refused', lastUpdated: '2026-11-30T09:58:00Z' }),
    nowMs: 0, rules: ['bmc-unreachable'], title: /^BMC unreachable since 2026-11-30 09:58:00 UTC$/,
  },
  'TFTP aborted at block 12 by the client': {
    events: [tftp(0, 'TFTPReadRequest', { file: 'ipxe.efi' }), tftp(400, 'TFTPTransferError', { file: 'ipxe.efi', bytes: 11 * 1468 + 100, blockSizeBytes: 1468, error: 'client sent ERROR: user abort', errorCode: 0 })],
    nowMs: 1000, rules: ['tftp-aborted'], title: /^TFTP transfer aborted at block 12 by the client$/, detail: /ipxe\.efi/,
  },
  'TFTP block number given by the server': {
    events: [tftp(400, 'TFTPTransferError', { file: 'undionly.kpxe', bytes: 512, block: 3, error: 'aborted' })], nowMs: 1000, rules: ['tftp-aborted'], title: /block 3 by the client/,
  },
  'TFTP timed out': {
    events: [tftp(400, 'TFTPTransferError', { file: 'undionly.kpxe', bytes: 5120, error: 'timeout after 5 retransmits' })], nowMs: 1000, rules: ['tftp-aborted'], title: /^TFTP transfer timed out at block 10$/,
  },
  'PXE ROM tsize probe then full transfer: fine': {
    events: [
      tftp(0, 'TFTPReadRequest', { file: 'undionly.kpxe', options: { tsize: '0' } }), tftp(5, 'TFTPTransferError', { file: 'undionly.kpxe', bytes: 0, errorCode: 8, error: 'option negotiation' }),
      tftp(20, 'TFTPReadRequest', { file: 'undionly.kpxe' }), tftp(300, 'TFTPTransferDone', { file: 'undionly.kpxe', bytes: 70_000 }),
    ],
    nowMs: 1000, rules: [],
  },
  'stuck in inspecting for 42 min': {
    host: host({ provisioning: { state: 'inspecting', ID: 'x', image: { url: '' } } }),
    events: [stateChange(0, 'registering', 'inspecting')], nowMs: 42 * 60_000, rules: ['stuck-in-state'], title: /^Stuck in inspecting for 42 min 00 s$/,
  },
  'inspecting for 5 min: not stuck yet': {
    host: host({ provisioning: { state: 'inspecting', ID: 'x', image: { url: '' } } }), events: [stateChange(0, 'registering', 'inspecting')], nowMs: 5 * 60_000, rules: [],
  },
  'stuck in inspecting, start from the operation history': {
    host: host({ provisioning: { state: 'inspecting', ID: 'x', image: { url: '' } }, operationHistory: { register: { start: '', end: '' }, inspect: { start: '2026-11-30T09:00:00Z', end: '' }, provision: { start: '', end: '' }, deprovision: { start: '', end: '' } } }),
    nowMs: 0, rules: ['stuck-in-state'], title: /Stuck in inspecting for 1 h 00 min/,
  },
  'registration error on credentials: check the secret': {
    host: host({ operationalStatus: 'error', errorType: 'registration error', errorMessage: 'Failed to get power state: HTTP 401 Unauthorized' }),
    nowMs: 0, rules: ['registration-credentials'], title: /^Registration failed on the BMC credentials: check the secret default\/node-1-bmc$/,
  },
  'provisioning retries exhausted': {
    host: host({ operationalStatus: 'error', errorType: 'provisioning error', errorMessage: 'provisioning failed 5 times in a row with the same image; change the image to try again', provisioningFailCount: 5, provisioning: { state: 'available', ID: 'x', image: { url: '' } } }),
    nowMs: 0, rules: ['provisioning-retries-exhausted'], title: /^Provisioning failed 5 times: retries exhausted$/,
  },
  'other host errors get a generic finding': {
    host: host({ operationalStatus: 'error', errorType: 'preparation error', errorMessage: 'preparing failed', errorCount: 2 }),
    nowMs: 0, rules: ['host-error'], title: /^preparation error \(attempt 2\)$/, detail: /^preparing failed$/,
  },
  'a healthy provisioned host: nothing': {
    host: host({ provisioning: { state: 'provisioned', ID: 'x', image: { url: 'http://i/x.qcow2' } }, poweredOn: true }),
    events: [dhcp(0, 'DHCPDiscover'), dhcp(1, 'DHCPOffer'), dhcp(2, 'DHCPRequest'), dhcp(3, 'DHCPAck'), http(10, '/vmlinuz'), http(20, '/initrd'), ramdisk(30_000)],
    nowMs: 86_400_000, rules: [],
  },
  'several causes at once, boot path first': {
    host: host({ operationalStatus: 'error', errorType: 'registration error', errorMessage: 'invalid credentials' }),
    events: [dhcp(0, 'DHCPDiscover', { arch: 'arm64' }), dhcp(1, 'DHCPOffer', { bootFile: 'ipxe.efi' }), dhcp(2, 'DHCPOffer', { bootFile: 'ipxe.efi' }), dhcp(3, 'DHCPOffer', { bootFile: 'ipxe.efi' })],
    nowMs: 60_000, rules: ['dhcp-offer-no-request', 'arch-mismatch', 'registration-credentials'],
  },
};

for (const [name, c] of Object.entries(cases)) {
  test(`diagnosis: ${name}`, () => {
    const findings: Finding[] = diagnoseHost({ ...(c.host === undefined ? {} : { host: c.host }), events: c.events ?? [], nowMs: T0 + c.nowMs });
    assert.deepEqual(findings.map((f) => f.rule), c.rules, JSON.stringify(findings, null, 2));
    const [first] = findings;
    if (c.title !== undefined) assert.match(first?.title ?? '', c.title);
    if (c.detail !== undefined) assert.match(first?.detail ?? '', c.detail);
  });
}

test('diagnosis: events in any order give the same findings', () => {
  const events = [http(1000, '/images/vmlinuz'), http(3000, '/images/initrd')];
  const forward = diagnoseHost({ events, nowMs: T0 + 600_000 });
  const backward = diagnoseHost({ events: [...events].reverse(), nowMs: T0 + 600_000 });
  assert.deepEqual(backward, forward);
  assert.equal(forward.length, 1);
});

test('diagnosis: thresholds are configurable and times use the given formatter', () => {
  const findings = diagnoseHost({
    events: [bmc(0, false, 'no route to host')], nowMs: T0 + 1000, thresholds: { ramdiskSilenceMs: 1 }, formatTime: (ms) => `T+${ms - T0}`,
  });
  assert.equal(findings[0]?.title, 'BMC unreachable since T+0');
  const early = diagnoseHost({ events: [http(0, '/vmlinuz'), http(1, '/initrd')], nowMs: T0 + 10, thresholds: { ramdiskSilenceMs: 5 } });
  assert.deepEqual(early.map((f) => f.rule), ['ramdisk-silent']);
});

const archCases: Record<string, ['x86' | 'arm64' | undefined, string]> = {
  'undionly.kpxe': ['x86', 'undionly.kpxe'],
  'ipxe.efi': ['x86', 'ipxe.efi'],
  'snponly.efi': ['x86', '/tftp/snponly.efi'],
  'shimx64.efi': ['x86', 'shimx64.efi'],
  'grubx64.efi': ['x86', 'grubx64.efi'],
  'shimaa64.efi': ['arm64', 'shimaa64.efi'],
  'arm64 URL': ['arm64', 'http://10.0.0.1/boot/ipxe-arm64.efi'],
  'unknown name': [undefined, 'boot.img'],
};
for (const [name, [expected, file]] of Object.entries(archCases)) {
  test(`bootFileArch: ${name}`, () => {
    assert.equal(bootFileArch(file), expected);
  });
}

test('formatIsoSeconds', () => {
  assert.equal(formatIsoSeconds(Date.parse('2026-11-30T17:29:10.456Z')), '2026-11-30 17:29:10 UTC');
});
