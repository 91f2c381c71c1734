/**
 * The TFTP server's prefix mounts over loopback: a file under `ramdisk/` streams from the mount
 * directory (never held whole in memory), the jail refuses the same names as for the roots, the
 * prefix never falls through to the roots, the hook still comes first, and a mount directory
 * created or replaced after start is served as it is now.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TftpWireError } from '../../../../bootsvc/tftp/errors.js';
import { encodeTftpRequest } from '../../../../bootsvc/tftp/packet.js';
import { startTftpServer, type TftpEvent, type TftpServer, type TftpServerOptions } from '../../../../bootsvc/tftp/tftp-server.js';
import { fetchFile, RawPeer } from './test-client.js';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

interface Fixture {
  base: string;
  root: string;
  ramdisk: string;
  initrd: Buffer;
  kernel: Buffer;
}

async function makeFixture(t: TestContext): Promise<Fixture> {
  const base = await mkdtemp(join(tmpdir(), 'rackside-tftp-mount-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = join(base, 'root');
  const ramdisk = join(base, 'cache', 'ramdisk');
  const outside = join(base, 'outside');
  await Promise.all([mkdir(join(root, 'ramdisk'), { recursive: true }), mkdir(join(ramdisk, 'sub'), { recursive: true }), mkdir(outside)]);
  const initrd = randomBytes(3 * 1024 * 1024 + 17);
  const kernel = randomBytes(70_000);
  await writeFile(join(ramdisk, 'initrd'), initrd);
  await writeFile(join(ramdisk, 'vmlinuz'), kernel);
  await writeFile(join(outside, 'secret'), 'must never be served');
  await writeFile(join(root, 'ramdisk', 'only-in-root'), 'the mount owns its prefix');
  await writeFile(join(root, 'secret'), 'a root file, not under the mount');
  await symlink(join(outside, 'secret'), join(ramdisk, 'escape'));
  await symlink(outside, join(ramdisk, 'escape-dir'));
  await symlink(join(root, 'secret'), join(ramdisk, 'to-root'));
  await symlink('vmlinuz', join(ramdisk, 'kernel-alias'));
  return { base, root, ramdisk, initrd, kernel };
}

async function start(t: TestContext, options: Partial<TftpServerOptions> & { mounts: Record<string, string> }): Promise<{ server: TftpServer; events: TftpEvent[] }> {
  const events: TftpEvent[] = [];
  const server = await startTftpServer({ listen: { host: '127.0.0.1', port: 0 }, roots: [], timeoutMs: 400, minTimeoutMs: 50, onEvent: (e) => events.push(e), ...options });
  t.after(() => server.stop());
  return { server, events };
}

const fetches: Record<string, { file: string; options?: [string, string][]; which: 'initrd' | 'kernel' }> = {
  'GRUB path with a leading slash, lock-step': { file: '/ramdisk/vmlinuz', which: 'kernel' },
  'blksize 1468, windowsize 16, tsize': { file: 'ramdisk/initrd', options: [['blksize', '1468'], ['windowsize', '16'], ['tsize', '0']], which: 'initrd' },
  'blksize 8192 with tsize': { file: 'ramdisk/initrd', options: [['blksize', '8192'], ['tsize', '0']], which: 'initrd' },
  'backslash separators': { file: 'ramdisk\\vmlinuz', which: 'kernel' },
  'a symlink that stays inside the mount': { file: 'ramdisk/kernel-alias', which: 'kernel' },
};

for (const [name, c] of Object.entries(fetches)) for (const nativeSockets of [true, false]) {
  test(`a mount serves: ${name} (${nativeSockets ? 'native sockets when built' : 'node:dgram'})`, async (t) => {
    const fixture = await makeFixture(t);
    const { server, events } = await start(t, { mounts: { ramdisk: fixture.ramdisk }, nativeSockets });
    const result = await fetchFile('127.0.0.1', server.address.port, c.file, { options: (c.options ?? []).map(([n, v]) => ({ name: n, value: v })) });
    assert.equal(result.error, undefined);
    const expected = c.which === 'initrd' ? fixture.initrd : fixture.kernel;
    assert.equal(sha256(result.data), sha256(expected));
    if (c.options?.some(([n]) => n === 'tsize') === true) assert.ok(result.oack?.some((o) => o.name === 'tsize' && o.value === String(expected.length)));
    const request = events.find((e) => e.type === 'request');
    assert.equal(request?.file, c.file);
  });
}

test('a mounted file streams: a stalled transfer holds a few chunks, not the whole file', async (t) => {
  const fixture = await makeFixture(t);
  const big = randomBytes(8 * 1024 * 1024);
  await writeFile(join(fixture.ramdisk, 'big'), big);
  const { server } = await start(t, { mounts: { ramdisk: fixture.ramdisk }, timeoutMs: 5000, minTimeoutMs: 5000 });
  const peer = await RawPeer.open();
  t.after(() => {
    peer.close();
  });
  peer.send(encodeTftpRequest('rrq', 'ramdisk/big'), server.address.port);
  await peer.waitFor((p) => p?.kind === 'data');
  const [transfer] = server.stats().transfers;
  assert.ok(transfer !== undefined);
  assert.equal(transfer.sizeBytes, big.length);
  assert.ok(transfer.bufferedBytes <= 5 * 256 * 1024, `${transfer.bufferedBytes} bytes buffered for an 8 MiB file`);
});

const refusals: Record<string, { file: string; code: number; message: RegExp }> = {
  'parent directory out of the mount': { file: 'ramdisk/../outside/secret', code: TftpWireError.accessViolation, message: /parent directory/ },
  'parent directory staying in the mount': { file: 'ramdisk/sub/../vmlinuz', code: TftpWireError.accessViolation, message: /parent directory/ },
  'backslash parent directory': { file: 'ramdisk\\..\\..\\outside\\secret', code: TftpWireError.accessViolation, message: /parent directory/ },
  'absolute escape': { file: '/ramdisk/../../etc/passwd', code: TftpWireError.accessViolation, message: /parent directory/ },
  'symlink to a file outside the mount': { file: 'ramdisk/escape', code: TftpWireError.accessViolation, message: /ramdisk\/escape leads outside the served mount/ },
  'symlinked directory outside the mount': { file: 'ramdisk/escape-dir/secret', code: TftpWireError.accessViolation, message: /leads outside the served mount/ },
  'symlink into a served root is still out of the mount': { file: 'ramdisk/to-root', code: TftpWireError.accessViolation, message: /leads outside the served mount/ },
  'control character': { file: 'ramdisk/vml\x01inuz', code: TftpWireError.accessViolation, message: /not printable ASCII/ },
  'missing file: no fall-through to the roots': { file: 'ramdisk/only-in-root', code: TftpWireError.fileNotFound, message: /file not found: ramdisk\/only-in-root/ },
  'a directory in the mount': { file: 'ramdisk/sub', code: TftpWireError.fileNotFound, message: /not a regular file/ },
};

for (const [name, c] of Object.entries(refusals)) {
  test(`a mount refuses: ${name}`, async (t) => {
    const fixture = await makeFixture(t);
    const { server, events } = await start(t, { roots: [fixture.root], mounts: { ramdisk: fixture.ramdisk } });
    const result = await fetchFile('127.0.0.1', server.address.port, c.file);
    assert.equal(result.error?.code, c.code);
    assert.match(result.error.message, c.message);
    assert.equal(result.data.length, 0);
    assert.ok(events.some((e) => e.type === 'error' && e.origin === 'server' && e.errorCode === c.code));
  });
}

test('names outside any mount go to the roots; a bare prefix is a root name', async (t) => {
  const fixture = await makeFixture(t);
  await writeFile(join(fixture.root, 'ramdisk.txt'), 'root file');
  const { server } = await start(t, { roots: [fixture.root], mounts: { ramdisk: fixture.ramdisk } });
  assert.equal((await fetchFile('127.0.0.1', server.address.port, 'secret')).data.toString(), 'a root file, not under the mount');
  assert.equal((await fetchFile('127.0.0.1', server.address.port, 'ramdisk.txt')).data.toString(), 'root file');
  const bare = await fetchFile('127.0.0.1', server.address.port, 'ramdisk');
  assert.equal(bare.error?.code, TftpWireError.fileNotFound, 'the root has a directory named ramdisk: not a file');
});

test('the hook comes before the mounts', async (t) => {
  const fixture = await makeFixture(t);
  const { server } = await start(t, {
    mounts: { ramdisk: fixture.ramdisk },
    resolve: (path) => Promise.resolve(path === 'ramdisk/vmlinuz' ? Buffer.from('generated') : undefined),
  });
  assert.equal((await fetchFile('127.0.0.1', server.address.port, 'ramdisk/vmlinuz')).data.toString(), 'generated');
  assert.equal(sha256((await fetchFile('127.0.0.1', server.address.port, 'ramdisk/initrd')).data), sha256(fixture.initrd));
});

test('a mount directory created after start, and a file replaced by rename, are served as they are now', async (t) => {
  const base = await mkdtemp(join(tmpdir(), 'rackside-tftp-mount-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const ramdisk = join(base, 'ramdisk');
  const { server } = await start(t, { mounts: { ramdisk } });
  const before = await fetchFile('127.0.0.1', server.address.port, 'ramdisk/initrd');
  assert.equal(before.error?.code, TftpWireError.fileNotFound);
  await mkdir(ramdisk);
  await writeFile(join(ramdisk, 'initrd'), 'initrd-1');
  assert.equal((await fetchFile('127.0.0.1', server.address.port, 'ramdisk/initrd')).data.toString(), 'initrd-1');
  await writeFile(join(ramdisk, 'initrd.new'), 'initrd-2, rebuilt');
  await rename(join(ramdisk, 'initrd.new'), join(ramdisk, 'initrd'));
  assert.equal((await fetchFile('127.0.0.1', server.address.port, 'ramdisk/initrd')).data.toString(), 'initrd-2, rebuilt');
});

test('a mount whose directory is a symlink is served from its target', async (t) => {
  const fixture = await makeFixture(t);
  const link = join(fixture.base, 'ramdisk-link');
  await symlink(fixture.ramdisk, link);
  const { server } = await start(t, { mounts: { ramdisk: link } });
  assert.equal(sha256((await fetchFile('127.0.0.1', server.address.port, 'ramdisk/vmlinuz')).data), sha256(fixture.kernel));
});

const badPrefixes: Record<string, string> = { 'two segments': 'a/b', empty: '', 'parent directory': '..', 'leading dot': '.hidden' };

for (const [name, prefix] of Object.entries(badPrefixes)) {
  test(`startTftpServer rejects a mount prefix: ${name}`, async () => {
    await assert.rejects(startTftpServer({ listen: { host: '127.0.0.1', port: 0 }, roots: [], mounts: { [prefix]: '/tmp' } }), /TFTP mount prefix .* must be one path segment/);
  });
}

test('a server with only a mount starts (the mount may not exist yet)', async (t) => {
  const { server } = await start(t, { mounts: { ramdisk: '/nonexistent/rackside-ramdisk' } });
  const result = await fetchFile('127.0.0.1', server.address.port, 'ramdisk/initrd');
  assert.equal(result.error?.code, TftpWireError.fileNotFound);
});
