/**
 * Table tests of rackside doctor's pure decisions about the head node: boot assets, kernel,
 * busybox, state dir, clock, controller, BMCs, the running agent's event-loop priority
 * (agent/doctor/checks-host.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigYaml } from '../../../agent/config.js';
import {
  checkAssets, checkBmcs, checkBusybox, checkClock, checkController, checkEraseKey, checkEventLoopPriority, checkKernel, checkRamdiskBuild, checkStateDir, CLOCK_BEHIND_LIMIT_MS,
} from '../../../agent/doctor/checks-host.js';
import type { AssetProbe, BmcProbe, CheckResult, ControllerProbe, EraseKeyProbe, FileProbe, RamdiskBuildProbe, StateDirProbe } from '../../../agent/doctor/types.js';

const CONFIG = parseConfigYaml('', 't.yaml', { agentId: 'rack-t' });
const WITH_KERNEL = parseConfigYaml('images: { ramdisk: { kernel: /boot/vmlinuz-6.1.0-18-amd64 } }', 't.yaml', { agentId: 'rack-t' });
const SHA = 'ab'.repeat(32);
type Expect = { status: CheckResult['status']; detail?: RegExp; fix?: RegExp };

function expectLine(actual: CheckResult | undefined, expected: Expect): void {
  assert.ok(actual !== undefined);
  assert.equal(actual.status, expected.status, JSON.stringify(actual));
  if (expected.detail !== undefined) assert.match(actual.detail, expected.detail);
  if (expected.fix !== undefined) assert.match(actual.fix, expected.fix);
  if (actual.status === 'fail') assert.notEqual(actual.fix, '');
  assert.ok(!actual.fix.includes('\n'), 'fixes are one line');
}

const assetCases: Record<string, [AssetProbe, Expect]> = {
  'iPXE found, with checksum': [{ name: 'undionly.kpxe', group: 'ipxe', package: 'ipxe', path: '/usr/lib/ipxe/undionly.kpxe', sha256: SHA }, { status: 'ok', detail: new RegExp(`^/usr/lib/ipxe/undionly\\.kpxe sha256:${SHA}$`) }],
  'iPXE missing fails': [{ name: 'snponly.efi', group: 'ipxe', package: 'ipxe' }, { status: 'fail', detail: /package ipxe; BIOS and UEFI hosts/, fix: /^apt-get install ipxe$/ }],
  'shim missing warns, recipe unpacks into the assets dir': [{ name: 'shimx64.efi', group: 'secure-boot-x64', package: 'shim-signed' }, { status: 'warn', detail: /UEFISecureBoot/, fix: /apt-get download shim-signed grub-efi-amd64-signed && for deb .*dpkg-deb -x "\$deb" \/var\/lib\/rackside\/boot-assets/ }],
  'arm64 missing is skipped without a recipe': [{ name: 'grubaa64.efi', group: 'arm64', package: 'grub-efi-arm64-signed' }, { status: 'skip', detail: /arm64 hosts/, fix: /^$/ }],
};
for (const [name, [probe, expected]] of Object.entries(assetCases)) {
  test(`checkAssets: ${name}`, () => {
    const lines = checkAssets([probe], '/var/lib/rackside/boot-assets');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.check, `asset ${probe.name}`);
    expectLine(lines[0], expected);
  });
}

const kernelCases: Record<string, [typeof CONFIG, FileProbe, Expect]> = {
  'cached kernel': [CONFIG, { path: '/var/lib/rackside/images/build/debian/linux-image-6.1_x/root/boot/vmlinuz-6.1', source: 'cache', sha256: SHA }, { status: 'ok', detail: /\(cache\) sha256:abab/ }],
  'configured kernel present': [WITH_KERNEL, { path: '/boot/vmlinuz-6.1.0-18-amd64', source: 'config', sha256: SHA }, { status: 'ok', detail: /\(config\)/ }],
  'configured kernel missing fails': [WITH_KERNEL, { path: '/boot/vmlinuz-6.1.0-18-amd64', source: 'config', error: 'does not exist' }, { status: 'fail', detail: /vmlinuz-6\.1\.0-18-amd64 does not exist/, fix: /images\.ramdisk\.kernel/ }],
  'nothing cached yet warns': [CONFIG, {}, { status: 'warn', detail: /\/var\/lib\/rackside\/images\/build\/debian yet; the agent's first ramdisk build/, fix: /apt-get download linux-image-amd64/ }],
};
for (const [name, [cfg, probe, expected]] of Object.entries(kernelCases)) {
  test(`checkKernel: ${name}`, () => {
    expectLine(checkKernel(cfg, probe), expected);
  });
}

const busyboxCases: Record<string, [FileProbe, Expect]> = {
  'static system busybox': [{ path: '/bin/busybox', source: 'system', isStatic: true, sha256: SHA }, { status: 'ok', detail: /\/bin\/busybox \(system\) sha256:/ }],
  'dynamic busybox warns': [{ path: '/bin/busybox', source: 'system', isStatic: false, sha256: SHA }, { status: 'warn', detail: /dynamically linked/, fix: /busybox-static/ }],
  'none': [{}, { status: 'warn', fix: /apt-get install busybox-static/ }],
  'not an ELF': [{ path: '/bin/busybox', error: 'not an ELF binary' }, { status: 'warn', detail: /not an ELF/ }],
};
for (const [name, [probe, expected]] of Object.entries(busyboxCases)) {
  test(`checkBusybox: ${name}`, () => {
    expectLine(checkBusybox(probe), expected);
  });
}

const dir = (over: Partial<StateDirProbe>): StateDirProbe => ({ path: '/var/lib/rackside', exists: true, writable: true, ...over });
const stateCases: Record<string, [StateDirProbe, Expect]> = {
  'writable': [dir({ ownerUid: 998, agentUid: 998 }), { status: 'ok', detail: /created, synced and removed/ }],
  'missing': [dir({ exists: false, writable: false }), { status: 'fail', detail: /does not exist/, fix: /install -d -m 0700 -o rackside/ }],
  'read-only': [dir({ writable: false, error: 'EROFS: read-only file system' }), { status: 'fail', detail: /EROFS/ }],
  'owned by root while rackside exists': [dir({ ownerUid: 0, agentUid: 998 }), { status: 'warn', detail: /owned by uid 0, not rackside \(998\)/, fix: /chown -R rackside:rackside/ }],
  'no rackside user (not installed)': [dir({ ownerUid: 0 }), { status: 'ok' }],
};
for (const [name, [probe, expected]] of Object.entries(stateCases)) {
  test(`checkStateDir: ${name}`, () => {
    expectLine(checkStateDir(probe), expected);
  });
}

const KEY = '/var/lib/rackside/erase_signing_ed25519_key';
const eraseKeyCases: Record<string, [EraseKeyProbe, Expect]> = {
  'not made yet: ok, the agent makes it': [{ path: KEY, exists: false }, { status: 'ok', detail: /not created yet: the agent makes it on first start/ }],
  'readable by others: the agent would refuse to start': [{ path: KEY, exists: true, mode: 0o100644, fingerprint: 'SHA256:x' }, { status: 'fail', detail: /mode 644\): the agent refuses to start/, fix: /^chmod 600 \/var\/lib\/rackside\/erase_signing_ed25519_key$/ }],
  'not an ed25519 OpenSSH key': [{ path: KEY, exists: true, mode: 0o100600, error: 'cannot sign with this key: the key is encrypted' }, { status: 'fail', detail: /encrypted/, fix: /^move .* aside/ }],
  'good: its fingerprint': [{ path: KEY, exists: true, mode: 0o100600, fingerprint: 'SHA256:AbC+/1' }, { status: 'ok', detail: /erase_signing_ed25519_key SHA256:AbC\+\/1 \(what erase record signatures/ }],
};
for (const [name, [probe, expected]] of Object.entries(eraseKeyCases)) {
  test(`checkEraseKey: ${name}`, () => {
    expectLine(checkEraseKey(probe), expected);
  });
}

const NOW = Date.parse('2026-03-01T12:00:00Z');
const clockCases: Record<string, [number, Pick<StateDirProbe, 'newestMtimeMs' | 'newestPath'>, Expect]> = {
  'sane, empty state dir': [NOW, {}, { status: 'ok', detail: /^2026-03-01T12:00:00\.000Z$/ }],
  'RTC reset to 1970': [0, {}, { status: 'fail', detail: /1970/, fix: /timedatectl set-ntp true/ }],
  'year 2023': [Date.parse('2023-12-31T23:59:59Z'), {}, { status: 'fail' }],
  'files a little in the future are tolerated': [NOW, { newestMtimeMs: NOW + CLOCK_BEHIND_LIMIT_MS - 1000, newestPath: '/var/lib/rackside/db/LOG' }, { status: 'ok' }],
  'clock hours behind the newest file': [NOW, { newestMtimeMs: NOW + 5 * 3_600_000, newestPath: '/var/lib/rackside/db/LOG' }, { status: 'fail', detail: /5\.0h behind \/var\/lib\/rackside\/db\/LOG/ }],
};
for (const [name, [now, probe, expected]] of Object.entries(clockCases)) {
  test(`checkClock: ${name}`, () => {
    expectLine(checkClock(now, probe), expected);
  });
}

const URL_ = 'https://controller.example.net/api/racks';
const controllerCases: Record<string, [ControllerProbe, Expect]> = {
  'not configured': [{ state: 'not-configured' }, { status: 'skip' }],
  'answers 405 to HEAD: reachable': [{ state: 'reachable', url: URL_, httpStatus: 405 }, { status: 'ok', detail: /answered HTTP 405/ }],
  'refuses the token': [{ state: 'reachable', url: URL_, httpStatus: 401 }, { status: 'fail', detail: /refused the credentials/, fix: /controller\.token/ }],
  'TLS failure fails': [{ state: 'error', url: URL_, code: 'tls', message: 'HEAD: TLS handshake failed: self-signed certificate' }, { status: 'fail', fix: /controller\.tls/ }],
  'unreadable TLS file fails': [{ state: 'error', url: URL_, code: 'config', message: 'cannot read controller.tls.ca' }, { status: 'fail' }],
  'unreachable only warns (store-and-forward)': [{ state: 'error', url: URL_, code: 'unreachable', message: 'ECONNREFUSED' }, { status: 'warn', detail: /outbox/ }],
  'timeout only warns': [{ state: 'error', url: URL_, code: 'timeout', message: 'no answer in time' }, { status: 'warn' }],
};
for (const [name, [probe, expected]] of Object.entries(controllerCases)) {
  test(`checkController: ${name}`, () => {
    expectLine(checkController(probe), expected);
  });
}

const SERVER = 'http://127.0.0.1:8080';
const ok = { host: 'node-a', address: 'ipmi://10.0.0.5', target: '10.0.0.5:623', protocol: 'udp' as const, reachable: true };
const bmcCases: Record<string, [BmcProbe, Expect[]]> = {
  'agent not running': [{ state: 'no-api', server: SERVER, error: 'ECONNREFUSED' }, [{ status: 'skip', detail: /not reachable \(ECONNREFUSED\); BMCs not checked/ }]],
  'no hosts': [{ state: 'done', server: SERVER, results: [], invalid: [] }, [{ status: 'skip', detail: /no hosts registered/ }]],
  'all answer': [{ state: 'done', server: SERVER, results: [ok, { ...ok, host: 'node-b' }], invalid: [] }, [{ status: 'ok', detail: /^2 of 2 answered$/ }]],
  'one down': [
    { state: 'done', server: SERVER, results: [ok, { ...ok, host: 'node-b', target: '10.0.0.6:443', protocol: 'tcp', reachable: false, error: 'connect EHOSTUNREACH' }], invalid: [] },
    [{ status: 'fail', detail: /^tcp 10\.0\.0\.6:443 \(ipmi:\/\/10\.0\.0\.5\): connect EHOSTUNREACH$/ }],
  ],
  'invalid address': [{ state: 'done', server: SERVER, results: [ok], invalid: [{ host: 'node-c', error: 'unknown BMC type' }] }, [{ status: 'fail', detail: /unknown BMC type/, fix: /spec\.bmc\.address of node-c/ }]],
};
for (const [name, [probe, expected]] of Object.entries(bmcCases)) {
  test(`checkBmcs: ${name}`, () => {
    const lines = checkBmcs(probe);
    assert.equal(lines.length, expected.length);
    expected.forEach((e, i) => {
      expectLine(lines[i], e);
    });
  });
}

const priorityCases: Record<string, [number | undefined, number | undefined, Expect]> = {
  'no running agent: skipped': [undefined, undefined, { status: 'skip', detail: /no running agent/ }],
  'the unit\'s nice -5: ok': [4242, -5, { status: 'ok', detail: /^agent pid 4242: event loop at nice -5$/ }],
  'raised further by the operator: ok': [4242, -10, { status: 'ok', detail: /nice -10/ }],
  'nice 0, started outside the unit: warns, renice of the main thread only': [4242, 0, { status: 'warn', detail: /event loop at nice 0, .*started outside the shipped unit \(Nice=-5\)/, fix: /^systemctl restart rackside \(the unit sets Nice=-5\), or for this run: renice -n -5 -p 4242$/ }],
  'lowered by the operator: warns': [4242, 10, { status: 'warn', detail: /nice 10/ }],
  'its stat unreadable: warns': [4242, undefined, { status: 'warn', detail: /cannot read \/proc\/4242\/stat/, fix: /as root/ }],
};
for (const [name, [pid, nice, expected]] of Object.entries(priorityCases)) {
  test(`event-loop priority: ${name}`, () => {
    expectLine(checkEventLoopPriority(pid, nice), expected);
  });
}

const DIR = '/var/lib/rackside/images/ramdisk';
const ramdiskCases: Record<string, [RamdiskBuildProbe, Expect]> = {
  'a failed build fails with the agent\'s reason and fix': [
    { dir: DIR, status: { state: 'failed', message: 'kernel image /nope/vmlinuz does not exist', fix: 'point images.ramdisk.kernel at an existing /boot/vmlinuz-*', since: '2026-03-01T11:00:00.000Z' } },
    { status: 'fail', detail: /^the amd64 ramdisk build failed \(2026-03-01T11:00:00\.000Z\): kernel image \/nope\/vmlinuz does not exist$/, fix: /^point images\.ramdisk\.kernel/ },
  ],
  'a build in progress warns: hosts wait for it': [
    { dir: DIR, status: { state: 'building', message: 'building the amd64 ramdisk (step 3/5, composing the initramfs, 40 %)' } },
    { status: 'warn', detail: /step 3\/5/, fix: /wait/ },
  ],
  'a build on disk is ok': [{ dir: DIR, status: { state: 'ready', message: 'built' }, built: { format: 'iso', kernelRelease: '6.1.0-57-amd64' } }, { status: 'ok', detail: /iso build, kernel 6\.1\.0-57-amd64/ }],
  'no build and no status: the agent builds it when it starts': [{ dir: DIR }, { status: 'warn', detail: /no ramdisk in/, fix: /start the agent/ }],
};
for (const [name, [probe, expected]] of Object.entries(ramdiskCases)) {
  test(`checkRamdiskBuild: ${name}`, () => {
    const line = checkRamdiskBuild(probe);
    assert.equal(line.check, 'ramdisk build');
    expectLine(line, expected);
  });
}
