/**
 * rackside's TFTP server against Debian's real clients over loopback: tftp-hpa (512-byte
 * blocks, no options — docs/test-peers.md), curl (`--tftp-blksize`, asks tsize and timeout), atftp
 * (`--option "blksize N"`, `--option "windowsize N"` — the one Debian client that speaks RFC
 * 7440). Every fetch is checked by sha256; the flight recorder must show the negotiated sizes.
 * Bad names through real clients (`../`, absolute escapes, symlinks out of the root,
 * backslashes) must be refused and never produce the outside file.
 *
 * Needs tftp-hpa, curl and atftp (skips without them unless RACKSIDE_REQUIRE_INTEGRATION=1).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TftpWireError } from '../../bootsvc/tftp/errors.js';
import { startTftpServer, type TftpEvent, type TftpServer } from '../../bootsvc/tftp/tftp-server.js';
import { requireTools } from '../helpers/integration.js';
import { runCommand } from '../helpers/netns.js';

const TOOLS = ['tftp', 'curl', 'atftp'];
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

interface Lab {
  dir: string;
  out: string;
  server: TftpServer;
  events: TftpEvent[];
  files: Record<string, Buffer>;
}

async function setUp(t: TestContext): Promise<Lab | undefined> {
  if (!requireTools(t, TOOLS)) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-tftp-it-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const root = join(dir, 'root');
  const out = join(dir, 'out');
  await Promise.all([mkdir(join(root, 'grub'), { recursive: true }), mkdir(out), mkdir(join(dir, 'outside'))]);
  const files: Record<string, Buffer> = {
    'ipxe.efi': randomBytes(1_100_000),
    'exact.bin': randomBytes(8192 * 40),
    'grub/grub.cfg': Buffer.from('set timeout=1\n'),
  };
  for (const [name, bytes] of Object.entries(files)) await writeFile(join(root, name), bytes);
  await writeFile(join(dir, 'outside', 'secret'), 'outside the root');
  await symlink(join(dir, 'outside', 'secret'), join(root, 'link-out'));
  const events: TftpEvent[] = [];
  const server = await startTftpServer({ listen: { host: '127.0.0.1', port: 0 }, roots: [root], onEvent: (e) => events.push(e) });
  t.after(() => server.stop());
  return { dir, out, server, events, files };
}

type Client = (lab: Lab, file: string, dest: string) => [string, string[]];

const tftpHpa: Client = (lab, file, dest) => ['tftp', ['127.0.0.1', String(lab.server.address.port), '-m', 'binary', '-c', 'get', file, dest]];
const curl =
  (blockSize: number): Client =>
  (lab, file, dest) => ['curl', ['-sS', '--fail', '-o', dest, '--tftp-blksize', String(blockSize), `tftp://127.0.0.1:${lab.server.address.port}/${file}`]];
const atftp =
  (...options: string[]): Client =>
  (lab, file, dest) => ['atftp', ['-g', '-r', file, '-l', dest, ...options.flatMap((o) => ['--option', o]), '127.0.0.1', String(lab.server.address.port)]];

async function waitForEnd(lab: Lab, count: number): Promise<TftpEvent[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ends = lab.events.filter((e) => e.type === 'done' || e.type === 'error');
    if (ends.length >= count) return ends;
    if (Date.now() > deadline) throw new Error(`expected ${count} finished transfers, saw ${ends.length}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const fetches: Record<string, { client: Client; file: string; blockSize: number; windowSize: number }> = {
  'tftp-hpa, 512-byte lock-step without options': { client: tftpHpa, file: 'ipxe.efi', blockSize: 512, windowSize: 1 },
  'curl blksize 512': { client: curl(512), file: 'ipxe.efi', blockSize: 512, windowSize: 1 },
  'curl blksize 1468': { client: curl(1468), file: 'ipxe.efi', blockSize: 1468, windowSize: 1 },
  'curl blksize 8192': { client: curl(8192), file: 'ipxe.efi', blockSize: 8192, windowSize: 1 },
  'curl blksize 8192, file an exact multiple (final empty block)': { client: curl(8192), file: 'exact.bin', blockSize: 8192, windowSize: 1 },
  'atftp blksize 512 with tsize': { client: atftp('blksize 512', 'tsize 0'), file: 'ipxe.efi', blockSize: 512, windowSize: 1 },
  'atftp blksize 1468': { client: atftp('blksize 1468'), file: 'ipxe.efi', blockSize: 1468, windowSize: 1 },
  'atftp blksize 8192': { client: atftp('blksize 8192'), file: 'ipxe.efi', blockSize: 8192, windowSize: 1 },
  'atftp blksize 1468 windowsize 16': { client: atftp('blksize 1468', 'windowsize 16'), file: 'ipxe.efi', blockSize: 1468, windowSize: 16 },
  'atftp blksize 512 windowsize 8': { client: atftp('blksize 512', 'windowsize 8'), file: 'ipxe.efi', blockSize: 512, windowSize: 8 },
  'atftp blksize 8192 windowsize 16 (granted 10: 80 KiB window budget)': { client: atftp('blksize 8192', 'windowsize 16'), file: 'exact.bin', blockSize: 8192, windowSize: 10 },
  'tftp-hpa, nested path with the GRUB prefix slash': { client: tftpHpa, file: '/grub/grub.cfg', blockSize: 512, windowSize: 1 },
};

for (const [name, c] of Object.entries(fetches)) {
  test(`real client fetch: ${name}`, async (t) => {
    const lab = await setUp(t);
    if (lab === undefined) return;
    const dest = join(lab.out, 'fetched');
    const [command, args] = c.client(lab, c.file, dest);
    await runCommand(command, args, { timeoutMs: 60_000 });
    const expected = lab.files[c.file.replace(/^\//, '')];
    assert.ok(expected !== undefined);
    assert.equal(sha256(await readFile(dest)), sha256(expected));
    const [end] = await waitForEnd(lab, 1);
    assert.ok(end?.type === 'done', `transfer ended with ${JSON.stringify(end)}`);
    assert.deepEqual([end.bytes, end.blockSize, end.windowSize], [expected.length, c.blockSize, c.windowSize]);
  });
}

test('real client fetch: curl at blksize 512 past block 65535 (wraparound to 0)', async (t) => {
  const lab = await setUp(t);
  if (lab === undefined) return;
  const big = randomBytes(512 * 65_536 + 1000);
  await writeFile(join(lab.dir, 'root', 'wrap.bin'), big);
  const dest = join(lab.out, 'wrap.bin');
  await runCommand('curl', ['-sS', '--fail', '-o', dest, '--tftp-blksize', '512', `tftp://127.0.0.1:${lab.server.address.port}/wrap.bin`], { timeoutMs: 120_000 });
  assert.equal(sha256(await readFile(dest)), sha256(big));
  const [end] = await waitForEnd(lab, 1);
  assert.equal(end?.type, 'done');
});

const refusals: Record<string, { client: 'tftp' | 'atftp'; file: string; code: number }> = {
  'tftp-hpa: ../ out of the root': { client: 'tftp', file: '../outside/secret', code: TftpWireError.accessViolation },
  'atftp: ../ hidden in a nested path': { client: 'atftp', file: 'grub/../../outside/secret', code: TftpWireError.accessViolation },
  'tftp-hpa: absolute path escape': { client: 'tftp', file: '/../outside/secret', code: TftpWireError.accessViolation },
  'atftp: absolute system path stays inside the root': { client: 'atftp', file: '/etc/passwd', code: TftpWireError.fileNotFound },
  'tftp-hpa: symlink out of the root': { client: 'tftp', file: 'link-out', code: TftpWireError.accessViolation },
  'atftp: backslash parent directories': { client: 'atftp', file: '..\\outside\\secret', code: TftpWireError.accessViolation },
  'tftp-hpa: missing file (shim probes revocations_sku.efi)': { client: 'tftp', file: 'revocations_sku.efi', code: TftpWireError.fileNotFound },
};

for (const [name, c] of Object.entries(refusals)) {
  test(`real client refused: ${name}`, async (t) => {
    const lab = await setUp(t);
    if (lab === undefined) return;
    const dest = join(lab.out, 'refused');
    const [command, args] = c.client === 'tftp' ? tftpHpa(lab, c.file, dest) : atftp()(lab, c.file, dest);
    const result = await runCommand(command, args, { timeoutMs: 30_000, allowFailure: true });
    const [end] = await waitForEnd(lab, 1);
    assert.ok(end?.type === 'error', `expected a refusal, got ${JSON.stringify(end)}`);
    assert.deepEqual([end.origin, end.errorCode], ['server', c.code]);
    const got = await readFile(dest).catch(() => Buffer.alloc(0));
    assert.ok(!got.toString().includes('outside the root'), `${command} received the outside file (${result.stdout}${result.stderr})`);
    assert.ok(result.code !== 0 || `${result.stdout}${result.stderr}`.includes(`${c.code}`), `${command} did not report the error`);
  });
}
