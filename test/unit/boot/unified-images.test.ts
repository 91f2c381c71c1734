import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnifiedImages, withUnifiedImages } from '../../../agent/boot/unified-images.js';
import type { BootQuery } from '../../../bootsvc/boot-lookup.js';
import type { BootTarget, RamdiskPlan } from '../../../bootsvc/ipxe/boot-plan.js';
import { UKI_STUB_X64 } from '../../../images/uki.js';
import { decodeCpio } from '../../../images/cpio.js';
import { skipOrFail } from '../../helpers/integration.js';

const MAC = '52:54:00:aa:00:01';
const PLAN: RamdiskPlan = { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://10.0.0.1:8081', token: 't'.repeat(24), consoles: ['ttyS0,115200'] };
const HTTP_BOOT: BootQuery = { mac: MAC, arch: 'x86_64', firmware: 'uefi', transport: 'http', isIpxe: false, archType: 16 };

async function setup(t: import('node:test').TestContext): Promise<{ dir: string; images: UnifiedImages; errors: unknown[] } | undefined> {
  if (!existsSync(UKI_STUB_X64)) {
    skipOrFail(t, `${UKI_STUB_X64} missing (Debian package systemd-boot-efi)`);
    return undefined;
  }
  const dir = await mkdtemp(join(tmpdir(), 'rackside-unified-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'ramdisk'));
  await writeFile(join(dir, 'ramdisk', 'vmlinuz'), Buffer.alloc(50_000, 1));
  await writeFile(join(dir, 'ramdisk', 'initrd'), Buffer.alloc(20_000, 2));
  const errors: unknown[] = [];
  return { dir, errors, images: new UnifiedImages({ dir: join(dir, 'uki'), ramdiskDir: join(dir, 'ramdisk'), onError: (_mac, err) => { errors.push(err); } }) };
}

function cmdlineOf(path: string, scratch: string): string {
  execFileSync('objcopy', ['-O', 'binary', '--only-section=.cmdline', path, scratch]);
  return execFileSync('cat', [scratch], { encoding: 'utf8' });
}

test('a host image carries the iPXE script\'s kernel parameters; it is reused while nothing changed and rebuilt when the ramdisk changes', async (t) => {
  const s = await setup(t);
  if (s === undefined) return;
  const path = await s.images.imageFor(MAC, PLAN);
  assert.equal(path, '/uki/52-54-00-aa-00-01.efi', JSON.stringify(s.errors));
  const file = join(s.dir, 'uki', '52-54-00-aa-00-01.efi');
  assert.equal(cmdlineOf(file, join(s.dir, 'c1')), `BOOTIF=01-52-54-00-aa-00-01 rackside.url=http://10.0.0.1:8081 rackside.token=${PLAN.token ?? ''} console=ttyS0,115200\0`);
  const first = await stat(file);
  assert.equal(await s.images.imageFor(MAC, PLAN), path);
  assert.equal((await stat(file)).ino, first.ino, 'not rebuilt');

  await writeFile(join(s.dir, 'ramdisk', 'initrd'), Buffer.alloc(30_000, 3));
  assert.equal(await s.images.imageFor(MAC, PLAN), path);
  const rebuilt = await readFile(file);
  assert.notEqual((await stat(file)).ino, first.ino, 'rebuilt after the initrd changed');
  assert.ok(rebuilt.includes(Buffer.alloc(30_000, 3)), 'with the new initrd inside');
  assert.equal((await readdir(join(s.dir, 'uki', 'store'))).length, 1, 'the stale image is removed');

  const other = await s.images.imageFor(MAC, { ...PLAN, token: 'u'.repeat(24) });
  assert.equal(other, path);
  assert.match(cmdlineOf(file, join(s.dir, 'c2')), /rackside\.token=u{24}/, 'a new token makes a new image');
  assert.deepEqual(s.errors, []);
});

test('with tls: the image names the https:// agent URL and carries the CA as one more initrd, at a 4-byte boundary after the ramdisk\'s', async (t) => {
  const s = await setup(t);
  if (s === undefined) return;
  const caPem = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUTest\n-----END CERTIFICATE-----\n';
  await writeFile(join(s.dir, 'ramdisk', 'initrd'), Buffer.alloc(20_001, 2));
  const images = new UnifiedImages({ dir: join(s.dir, 'uki'), ramdiskDir: join(s.dir, 'ramdisk'), tls: { agentUrl: 'https://10.0.0.1:8443', caPem }, onError: (_mac, err) => { s.errors.push(err); } });
  const path = await images.imageFor(MAC, PLAN);
  assert.equal(path, '/uki/52-54-00-aa-00-01.efi', JSON.stringify(s.errors));
  const file = join(s.dir, 'uki', '52-54-00-aa-00-01.efi');
  assert.equal(cmdlineOf(file, join(s.dir, 'c3')), `BOOTIF=01-52-54-00-aa-00-01 rackside.url=https://10.0.0.1:8443 rackside.token=${PLAN.token ?? ''} console=ttyS0,115200\0`);
  execFileSync('objcopy', ['-O', 'binary', '--only-section=.initrd', file, join(s.dir, 'initrd.bin')]);
  const initrd = await readFile(join(s.dir, 'initrd.bin'));
  assert.deepEqual(initrd.subarray(0, 20_001), Buffer.alloc(20_001, 2), 'the ramdisk first');
  assert.deepEqual(initrd.subarray(20_001, 20_004), Buffer.alloc(3), 'padded to 4 bytes');
  const overlay = decodeCpio(initrd.subarray(20_004));
  const ca = overlay.find((e) => e.path === 'etc/rackside/ca.pem');
  assert.ok(ca?.type === 'file' && Buffer.from(ca.data).toString() === caPem, JSON.stringify(overlay.map((e) => e.path)));
  assert.deepEqual(s.errors, []);
});

test('plans whose files are not on the boot servers, or missing, get no image', async (t) => {
  const s = await setup(t);
  if (s === undefined) return;
  assert.equal(await s.images.imageFor(MAC, { ...PLAN, kernel: 'http://mirror/vmlinuz' }), undefined);
  assert.equal(await s.images.imageFor(MAC, { ...PLAN, initrds: ['/ramdisk/../etc/passwd'] }), undefined);
  assert.equal(await s.images.imageFor(MAC, { ...PLAN, initrds: ['/ramdisk/missing'] }), undefined);
});

test('withUnifiedImages: only the firmware\'s own UEFI HTTP request of an x64 host without Secure Boot gets the image', async (t) => {
  const s = await setup(t);
  if (s === undefined) return;
  const ramdisk: BootTarget = { plan: PLAN, host: 'h' };
  const lookup = withUnifiedImages({ target: (q) => Promise.resolve(q.mac === MAC ? (q.uuid === 'secure' ? { ...ramdisk, secureBoot: true } : ramdisk) : undefined) }, s.images);
  assert.equal((await lookup.target(HTTP_BOOT))?.unifiedImage, '/uki/52-54-00-aa-00-01.efi');
  assert.equal((await lookup.target({ ...HTTP_BOOT, isIpxe: true }))?.unifiedImage, undefined, 'iPXE');
  assert.equal((await lookup.target({ ...HTTP_BOOT, transport: 'tftp', archType: 7 }))?.unifiedImage, undefined, 'PXE');
  assert.equal((await lookup.target({ ...HTTP_BOOT, arch: 'arm64', archType: 19 }))?.unifiedImage, undefined, 'arm64');
  assert.equal((await lookup.target({ mac: MAC }))?.unifiedImage, undefined, 'a script fetch');
  assert.equal((await lookup.target({ ...HTTP_BOOT, uuid: 'secure' }))?.unifiedImage, undefined, 'Secure Boot');
  assert.equal(await lookup.target({ ...HTTP_BOOT, mac: '52:54:00:aa:00:02' }), undefined, 'unknown MAC');
});
