import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BootEvent, HttpBootEvent } from '../../../../bootsvc/events.js';
import { startBootHttpServer, type BootHttpServer } from '../../../../bootsvc/http/boot-http-server.js';
import type { BootLookup, BootTargetQuery } from '../../../../bootsvc/boot-lookup.js';
import type { BootTarget } from '../../../../bootsvc/ipxe/boot-plan.js';

const KNOWN = '52:54:00:00:00:01';
const BROKEN = '52:54:00:00:00:02';
const FAILING = '52:54:00:00:00:03';
let dir: string;
let server: BootHttpServer;
const events: BootEvent[] = [];
const BIG_BYTES = 32 * 1024 * 1024;

const plans: BootLookup = {
  target({ mac }: BootTargetQuery): Promise<BootTarget | undefined> {
    if (mac === KNOWN) return Promise.resolve({ host: 'node-0', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://10.0.0.1:8081', token: 'abcdefghijklmnop0123' } });
    if (mac === BROKEN) return Promise.resolve({ plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/k', initrds: ['/i'], agentUrl: 'http://x', extraKernelParams: ['a b'] } });
    if (mac === FAILING) return Promise.reject(new Error('store unavailable'));
    return Promise.resolve(undefined);
  },
};

interface Reply { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

function call(path: string, method = 'GET', headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The HTTP events recorded for `path` (the server reports on response close). */
async function eventsFor(path: string): Promise<HttpBootEvent[]> {
  for (let i = 0; i < 50; i++) {
    const found = events.filter((e): e is HttpBootEvent => e.kind === 'http' && e.path === path);
    if (found.length > 0) return found;
    await new Promise((r) => setTimeout(r, 5));
  }
  return [];
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rackside-boothttp-'));
  mkdirSync(join(dir, 'root/images/sub'), { recursive: true });
  mkdirSync(join(dir, 'ramdisk'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'root/images/os.img'), Buffer.alloc(5000, 7));
  writeFileSync(join(dir, 'ramdisk/vmlinuz'), 'kernel');
  mkdirSync(join(dir, 'ramdisk/v1'));
  writeFileSync(join(dir, 'ramdisk/v1/status'), 'a file named like a route');
  writeFileSync(join(dir, 'ramdisk/v1/notes.txt'), 'a plain file under the route prefix');
  writeFileSync(join(dir, 'root/images/swap.img'), 'old image');
  writeFileSync(join(dir, 'root/images/big.img'), Buffer.alloc(BIG_BYTES, 1));
  writeFileSync(join(dir, 'assets/grubnetx64.efi.signed'), 'grub-binary');
  writeFileSync(join(dir, 'secret.txt'), 'TOP-SECRET');
  symlinkSync(join(dir, 'secret.txt'), join(dir, 'root/images/escape.img'));
  server = await startBootHttpServer({
    host: '127.0.0.1',
    port: 0,
    root: join(dir, 'root'),
    mounts: { ramdisk: join(dir, 'ramdisk') },
    assets: new Map([['grubx64.efi', join(dir, 'assets/grubnetx64.efi.signed')]]),
    plans,
    onEvent: (e) => events.push(e),
    extraRoutes: (app) => {
      app.post('/ramdisk/v1/heartbeat', (_req, res) => {
        res.json({ ok: true });
      });
      app.get('/ramdisk/v1/status', (_req, res) => {
        res.type('text/plain').send('from the route');
      });
    },
  });
});

after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a known MAC gets its ramdisk script with this server\'s URLs', async () => {
  const r = await call('/boot/52-54-00-00-00-01.ipxe');
  assert.equal(r.status, 200);
  assert.equal(r.headers['cache-control'], 'no-store');
  const body = r.body.toString();
  assert.match(body, new RegExp(`^kernel --name vmlinuz ${server.url}/ramdisk/vmlinuz `, 'm'));
  assert.match(body, /rackside\.token=abcdefghijklmnop0123/);
  const [event] = await eventsFor('/boot/52-54-00-00-00-01.ipxe');
  assert.equal(event?.mac, KNOWN);
  assert.equal(event.servedAs, 'ipxe-script');
  assert.equal(event.bytes, r.body.length);
  assert.equal(event.status, 200);
});

test('an unknown MAC gets "nothing to do"; per-MAC GRUB configs and the entry files render', async () => {
  assert.match((await call('/boot/52-54-00-00-00-99.ipxe')).body.toString(), /not a known host/);
  assert.match((await call('/grub/52:54:00:00:00:01.cfg')).body.toString(), /^\s*if linux \/ramdisk\/vmlinuz /m);
  assert.match((await call('/grub/grub.cfg')).body.toString(), /net_default_mac/);
  assert.match((await call('/boot/boot.ipxe')).body.toString(), /netX\/mac:hexhyp/);
});

test('shim\'s //grubx64.efi is the GRUB asset; its probes get a fast 404', async () => {
  const r = await call('//grubx64.efi');
  assert.equal(r.status, 200);
  assert.equal(r.body.toString(), 'grub-binary');
  const before = server.stats().probes;
  for (const probe of ['/revocations_sku.efi', '//revocations_sbat.efi', '/shim_certificate_0.efi']) {
    assert.equal((await call(probe)).status, 404, probe);
  }
  assert.equal(server.stats().probes, before + 3);
  const [event] = await eventsFor('/shim_certificate_0.efi');
  assert.equal(event?.servedAs, 'probe');
});

test('mounts and the root are served; symlinks out of them are refused', async () => {
  assert.equal((await call('/ramdisk/vmlinuz')).body.toString(), 'kernel');
  const ranged = await call('/images/os.img', 'GET', { range: 'bytes=10-19' });
  assert.equal(ranged.status, 206);
  assert.equal(ranged.body.length, 10);
  const [event] = await eventsFor('/images/os.img');
  assert.equal(event?.range, 'bytes=10-19');
  assert.equal(event.contentRange, 'bytes 10-19/5000');
  assert.equal(event.bytes, 10);
  const escape = await call('/images/escape.img');
  assert.equal(escape.status, 403);
  assert.doesNotMatch(escape.body.toString(), /TOP-SECRET/);
  assert.equal((await call('/images/sub')).status, 404);
  assert.equal((await call('/images/sub/')).status, 404);
});

test('only GET and HEAD on boot paths (405 with Allow); extra routes come first', async () => {
  const r = await call('/images/os.img', 'POST');
  assert.equal(r.status, 405);
  assert.equal(r.headers.allow, 'GET, HEAD');
  const extra = await call('/ramdisk/v1/heartbeat', 'POST');
  assert.equal(extra.status, 200);
  assert.deepEqual(JSON.parse(extra.body.toString()), { ok: true });
});

test('a plan that cannot be rendered is a 500, a failing lookup a 503; both counted', async () => {
  const errors = server.stats().errors;
  const broken = await call('/boot/52-54-00-00-00-02.ipxe');
  assert.equal(broken.status, 500);
  assert.match(broken.body.toString(), /whitespace/);
  assert.equal((await call('/boot/52-54-00-00-00-03.ipxe')).status, 503);
  assert.equal(server.stats().errors, errors + 2);
  const [event] = await eventsFor('/boot/52-54-00-00-00-03.ipxe');
  assert.equal(event?.mac, FAILING);
  assert.equal(event.detail, 'store unavailable');
});

test('HEAD of a generated script has the length and no body', async () => {
  const head = await call('/grub/grub.cfg', 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.ok(Number(head.headers['content-length']) > 0);
});

test('stats count requests and statuses', () => {
  const stats = server.stats();
  assert.ok(stats.requests >= 10);
  assert.ok((stats.byStatus['200'] ?? 0) >= 5);
  assert.ok(stats.refused >= 1);
  assert.ok(stats.bytes > 0);
});

test('a listener that throws does not break responses', async () => {
  const s = await startBootHttpServer({ host: '127.0.0.1', port: 0, plans, onEvent: () => { throw new Error('recorder broke'); } });
  try {
    const r = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port: s.port, path: '/grub/grub.cfg' }, (res) => {
        res.resume();
        res.on('end', () => {
          resolve(res.statusCode ?? 0);
        });
      }).on('error', reject).end();
    });
    assert.equal(r, 200);
  } finally {
    await s.stop();
  }
});

test('a missing root is a clear start-up error', async () => {
  await assert.rejects(startBootHttpServer({ port: 0, plans, root: join(tmpdir(), 'rackside-no-such-dir-xyz') }), /ENOENT/);
});

test('a file replaced on disk (a new inode renamed over it) is served fresh, not from the cached descriptor', async () => {
  const first = await call('/images/swap.img');
  assert.equal(first.body.toString(), 'old image');
  const opens = server.stats().fileOpens;
  assert.equal((await call('/images/swap.img')).body.toString(), 'old image');
  assert.equal(server.stats().fileOpens, opens, 'the second GET came from the cache');
  writeFileSync(join(dir, 'root/images/swap.new'), 'new image, longer');
  renameSync(join(dir, 'root/images/swap.new'), join(dir, 'root/images/swap.img'));
  const fresh = await call('/images/swap.img');
  assert.equal(fresh.body.toString(), 'new image, longer');
  assert.notEqual(fresh.headers.etag, first.headers.etag);
  assert.equal(server.stats().fileOpens, opens + 1);
  const ranged = await call('/images/swap.img', 'GET', { range: 'bytes=0-2' });
  assert.equal(ranged.body.toString(), 'new');
});

test('repeated Range GETs of one file cost one open', async () => {
  await call('/images/os.img', 'HEAD');
  const opens = server.stats().fileOpens;
  for (let i = 0; i < 20; i++) {
    const r = await call('/images/os.img', 'GET', { range: `bytes=${String(i * 100)}-${String(i * 100 + 99)}` });
    assert.equal(r.status, 206);
    assert.equal(r.headers['content-range'], `bytes ${String(i * 100)}-${String(i * 100 + 99)}/5000`);
  }
  assert.equal(server.stats().fileOpens, opens);
});

test('conditional GETs and HEADs of files: 304 for a matching ETag, HEAD reported with no bytes', async () => {
  const head = await call('/ramdisk/vmlinuz', 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], '6');
  assert.equal(head.body.length, 0);
  const etag = String(head.headers.etag);
  const notModified = await call('/ramdisk/vmlinuz', 'GET', { 'if-none-match': etag });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.body.length, 0);
  const reported = (await eventsFor('/ramdisk/vmlinuz')).filter((e) => e.method === 'HEAD' || e.status === 304);
  assert.ok(reported.some((e) => e.method === 'HEAD' && e.bytes === 0 && e.servedAs === 'file' && e.completed));
  assert.ok(reported.some((e) => e.status === 304 && e.bytes === 0));
});

test('a missing file is a 404 reported as a file that was not found', async () => {
  const r = await call('/ramdisk/initrd-missing');
  assert.equal(r.status, 404);
  const [event] = await eventsFor('/ramdisk/initrd-missing');
  assert.equal(event?.servedAs, 'file');
  assert.equal(event.detail, 'not-found');
});

test('GETs under the extra routes\' prefix go to the extra routes first; other files there are still served', async () => {
  const routed = await call('/ramdisk/v1/status');
  assert.equal(routed.status, 200);
  assert.equal(routed.body.toString(), 'from the route');
  assert.equal((await call('/RAMDISK/v1/status')).body.toString(), 'from the route', 'express matches case-insensitively');
  const file = await call('/ramdisk/v1/notes.txt');
  assert.equal(file.status, 200);
  assert.equal(file.body.toString(), 'a plain file under the route prefix');
});

test('a download the client abandons is counted as aborted and reported incomplete', async () => {
  const aborted = server.stats().aborted;
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path: '/images/big.img?abandon=1' }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end();
  });
  const [event] = await eventsFor('/images/big.img');
  assert.equal(event?.completed, false);
  assert.equal(event.status, 200);
  assert.ok(event.bytes > 0 && event.bytes < BIG_BYTES, `${String(event.bytes)} bytes handed to the socket`);
  assert.equal(server.stats().aborted, aborted + 1);
  assert.equal(server.stats().active, 0);
});
