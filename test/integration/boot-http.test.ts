// Boot HTTP against a real client: curl fetches from startBootHttpServer over loopback —
// ranges (206 with the right bytes, tail, 416), If-Range with a stale ETag (full 200), HEAD,
// a 4 MiB file by sha256, shim's //name mapping, and the refusals: ../, %2e%2e, backslash,
// absolute paths, symlinks out of the root, directory listings.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing curl is a failure, otherwise a skip.
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBootHttpServer, type BootHttpServer } from '../../bootsvc/http/boot-http-server.js';

const required = process.env.RACKSIDE_REQUIRE_INTEGRATION === '1';
const haveCurl = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;

function needCurl(t: TestContext): boolean {
  if (haveCurl) return true;
  if (required) throw new Error('RACKSIDE_REQUIRE_INTEGRATION=1: curl is missing (apt-get install curl)');
  t.skip('curl is missing');
  return false;
}

let dir: string;
let server: BootHttpServer;
const image = randomBytes(4 * 1024 * 1024);
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

interface CurlResult { status: number; body: Buffer; headers: string }

/** Runs curl (asynchronously) with `args` against `path` (sent as-is), returning status, body and headers. */
async function curl(path: string, args: string[] = []): Promise<CurlResult> {
  const out = join(dir, `out-${randomBytes(4).toString('hex')}`);
  const hdr = `${out}.h`;
  // Asynchronously: the server runs in this process and must keep answering.
  const { stdout: status } = await promisify(execFile)('curl', ['-s', '--max-time', '30', '--path-as-is', '-o', out, '-D', hdr, '-w', '%{http_code}', ...args, `${server.url}${path}`], { encoding: 'utf8' });
  let body = Buffer.alloc(0);
  try {
    body = readFileSync(out);
  } catch {
    // HEAD and empty responses write no file.
  }
  return { status: Number(status), body, headers: readFileSync(hdr, 'utf8') };
}

function header(r: CurlResult, name: string): string | undefined {
  const m = new RegExp(`^${name}:\\s*(.*?)\\r?$`, 'im').exec(r.headers);
  return m?.[1];
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rackside-boothttp-curl-'));
  mkdirSync(join(dir, 'root/images/sub'), { recursive: true });
  writeFileSync(join(dir, 'root/images/os.img'), image);
  writeFileSync(join(dir, 'root/images/sub/readme.txt'), 'hello');
  writeFileSync(join(dir, 'shimx64.efi.signed'), 'shim');
  writeFileSync(join(dir, 'grubnetx64.efi.signed'), 'grub');
  writeFileSync(join(dir, 'private.key'), 'PRIVATE-KEY-MATERIAL');
  symlinkSync(join(dir, 'private.key'), join(dir, 'root/images/link.img'));
  symlinkSync(dir, join(dir, 'root/up'));
  symlinkSync('os.img', join(dir, 'root/images/inside.img'));
  server = await startBootHttpServer({
    host: '127.0.0.1',
    port: 0,
    root: join(dir, 'root'),
    assets: new Map([['shimx64.efi', join(dir, 'shimx64.efi.signed')], ['grubx64.efi', join(dir, 'grubnetx64.efi.signed')]]),
    plans: { target: () => Promise.resolve(undefined) },
  });
});

after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('curl: the full image arrives intact', async (t) => {
  if (!needCurl(t)) return;
  const r = await curl('/images/os.img');
  assert.equal(r.status, 200);
  assert.equal(sha256(r.body), sha256(image));
  assert.equal(header(r, 'accept-ranges'), 'bytes');
  assert.ok(header(r, 'etag'));
  assert.ok(header(r, 'last-modified'));
});

test('curl: Range 0-1023 → 206 with exactly those bytes', async (t) => {
  if (!needCurl(t)) return;
  const r = await curl('/images/os.img', ['-r', '0-1023']);
  assert.equal(r.status, 206);
  assert.deepEqual(r.body, image.subarray(0, 1024));
  assert.equal(header(r, 'content-range'), `bytes 0-1023/${image.length}`);
});

test('curl: tail range → the last bytes', async (t) => {
  if (!needCurl(t)) return;
  const r = await curl('/images/os.img', ['-r', '-500']);
  assert.equal(r.status, 206);
  assert.deepEqual(r.body, image.subarray(image.length - 500));
  assert.equal(header(r, 'content-range'), `bytes ${image.length - 500}-${image.length - 1}/${image.length}`);
});

test('curl: a range past the end → 416 with bytes */size', async (t) => {
  if (!needCurl(t)) return;
  const r = await curl('/images/os.img', ['-r', `${image.length}-`]);
  assert.equal(r.status, 416);
  assert.equal(header(r, 'content-range'), `bytes */${image.length}`);
});

test('curl: If-Range with a stale ETag → the full 200; with the current one → 206', async (t) => {
  if (!needCurl(t)) return;
  const stale = await curl('/images/os.img', ['-r', '0-9', '-H', 'If-Range: "0-0"']);
  assert.equal(stale.status, 200);
  assert.equal(stale.body.length, image.length);
  const etag = header(await curl('/images/os.img', ['-I']), 'etag');
  assert.ok(etag);
  const fresh = await curl('/images/os.img', ['-r', '0-9', '-H', `If-Range: ${etag}`]);
  assert.equal(fresh.status, 206);
  assert.deepEqual(fresh.body, image.subarray(0, 10));
});

test('curl: HEAD → headers with the length, no body', async (t) => {
  if (!needCurl(t)) return;
  const r = await curl('/images/os.img', ['-I']);
  assert.equal(r.status, 200);
  assert.equal(header(r, 'content-length'), String(image.length));
  // With -I curl writes the header block to the output file too: nothing else may follow it.
  assert.equal(r.body.toString(), r.headers);
});

test('curl: shim\'s //grubx64.efi maps to grubx64.efi', async (t) => {
  if (!needCurl(t)) return;
  const r = await curl('//grubx64.efi');
  assert.equal(r.status, 200);
  assert.equal(r.body.toString(), 'grub');
  assert.equal((await curl('/boot//shimx64.efi')).body.toString(), 'shim');
});

const refusals: Record<string, [string, number]> = {
  '../': ['/images/../../private.key', 403],
  '%2e%2e': ['/images/%2e%2e/%2e%2e/private.key', 403],
  'backslash': ['/images\\..\\..\\private.key', 400],
  'encoded backslash': ['/images%5c..%5cprivate.key', 400],
  'NUL': ['/images/os.img%00.txt', 400],
  'absolute path': ['/etc/passwd', 404],
  'symlink to a file out of the root': ['/images/link.img', 403],
  'symlinked directory out of the root': ['/up/private.key', 403],
  'directory (no listing)': ['/images/', 404],
  'directory without slash': ['/images/sub', 404],
  'hidden file': ['/.ssh/id_rsa', 404],
  // Unicode look-alikes of `.` and `/` are names, never separators or parent directories: no
  // normalization (NFKC would turn U+FF0E into `.`) happens anywhere on the way to the jail.
  'fullwidth full stops (U+FF0E)': ['/images/%EF%BC%8E%EF%BC%8E/%EF%BC%8E%EF%BC%8E/private.key', 404],
  'one dot leaders (U+2024)': ['/images/%E2%80%A4%E2%80%A4/%E2%80%A4%E2%80%A4/private.key', 404],
  'division slash (U+2215)': ['/images/..%E2%88%95..%E2%88%95private.key', 404],
  'fullwidth solidus (U+FF0F)': ['/images/..%EF%BC%8F..%EF%BC%8Fprivate.key', 404],
  'overlong UTF-8 dots (%C0%AE)': ['/images/%C0%AE%C0%AE/%C0%AE%C0%AE/private.key', 400],
};
for (const [name, [path, status]] of Object.entries(refusals)) {
  test(`curl: refused — ${name}`, async (t) => {
    if (!needCurl(t)) return;
    const r = await curl(path);
    assert.equal(r.status, status, `${path} → ${r.status}`);
    assert.doesNotMatch(r.body.toString(), /PRIVATE-KEY-MATERIAL|root:x:0/);
    assert.doesNotMatch(r.body.toString(), /readme\.txt/);
  });
}

test('curl: a symlink that stays inside the root is served', async (t) => {
  if (!needCurl(t)) return;
  const r = await curl('/images/inside.img', ['-r', '0-15']);
  assert.equal(r.status, 206);
  assert.deepEqual(r.body, image.subarray(0, 16));
});
