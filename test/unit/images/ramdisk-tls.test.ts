// The ramdisk agent with an https:// rackside.url (a host booted by UEFI HTTPS, docs/https-boot.md)
// under busybox sh against an HTTPS test server whose certificate comes from a real boot CA
// (agent/boot/boot-ca.ts): every call and download goes through curl verifying the server with
// ${ETC}/ca.pem; another CA is refused and nothing falls back to clear text; without curl or the
// CA the agent calls nothing at all.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBootCertificate, type BootCertificate } from '../../../agent/boot/boot-ca.js';
import { decodeRamdiskResult, type RamdiskCommand } from '../../../images/index.js';
import type { DeployResultDetails } from '../../../images/ramdisk-results.js';
import { fakeEnv, runAgent, type AgentRun } from './agent-harness.js';
import { findTool, makeDiskImage, readRange, requireTools, scratchDir } from './helpers.js';
import { startRamdiskServer, type RamdiskTestServer } from './ramdisk-server.js';

const token = 'tok_0123456789abcdef';
const MiB = 1024 * 1024;
const tools = { busybox: 'busybox-static', curl: 'curl', openssl: 'openssl' };
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A boot CA and a server certificate for 127.0.0.1, made in a scratch state directory. */
async function bootCa(t: TestContext): Promise<BootCertificate> {
  const stateDir = mkdtempSync(join(tmpdir(), 'rackside-ramdisk-tls-ca-'));
  t.after(() => { rmSync(stateDir, { recursive: true, force: true }); });
  return ensureBootCertificate(stateDir, ['127.0.0.1']);
}

interface TlsSetup {
  env: Record<string, string>;
  dir: string;
  server: RamdiskTestServer;
}

/**
 * The fake machine with curl on its PATH (beside the busybox applets) and `trust` as
 * ${ETC}/ca.pem, talking to an HTTPS ramdisk server with `served`'s certificate.
 */
async function setup(t: TestContext, name: string, served: BootCertificate, trust: string | undefined, withCurl = true): Promise<TlsSetup> {
  const { dir, cleanup } = scratchDir(name);
  t.after(cleanup);
  const env = fakeEnv(dir);
  if (withCurl) symlinkSync(findTool('curl') ?? 'curl', join(env.PATH!, 'curl'));
  if (trust !== undefined) writeFileSync(join(env.RACKSIDE_ETC!, 'ca.pem'), trust);
  const server = await startRamdiskServer(token, '127.0.0.1', { cert: served.chainPem, key: served.keyPem });
  t.after(() => server.close());
  writeFileSync(join(env.RACKSIDE_ETC!, 'url'), `${server.url}\n`);
  writeFileSync(join(env.RACKSIDE_ETC!, 'token'), `${token}\n`);
  return { env: { ...env, RACKSIDE_REPORT_ATTEMPTS: '2', RACKSIDE_REPORT_RETRY_SECONDS: '0' }, dir, server };
}

async function once(s: TlsSetup, cmd?: RamdiskCommand): Promise<AgentRun> {
  if (cmd !== undefined) s.server.commands.push(cmd);
  return runAgent(['once'], s.env);
}

test('https rackside.url: heartbeat and inventory go through curl, verified against the CA, with the token', async (t) => {
  if (!requireTools(t, tools)) return;
  const ca = await bootCa(t);
  const s = await setup(t, 'agent-tls-inspect', ca, ca.caPem);
  const r = await once(s, { command: 'inspect', commandId: 'i-1', intervalSeconds: 5 });
  assert.equal(r.code, 0, r.stdout);
  assert.deepEqual(s.server.seen.map((x) => x.path), ['/ramdisk/v1/heartbeat', '/ramdisk/v1/inventory'], r.stdout);
  assert.ok(s.server.seen.every((x) => x.authorization === `Bearer ${token}`));
  assert.equal((s.server.seen[1]!.body as { command_id: string }).command_id, 'i-1');
  assert.deepEqual(s.server.tlsErrors, []);
  assert.match(r.stdout, /agent: reporting to https:\/\/127\.0\.0\.1:\d+/);
});

test('https rackside.url: image and config drive come over TLS; a cut download resumes with Range; the config drive lands on the disk', async (t) => {
  if (!requireTools(t, { ...tools, sfdisk: 'fdisk' })) return;
  const ca = await bootCa(t);
  const s = await setup(t, 'agent-tls-deploy', ca, ca.caPem);
  const image = makeDiskImage(join(s.dir, 'image.raw'), 5 * MiB);
  const configDrive = Buffer.alloc(200_000, 0x55);
  writeFileSync(join(s.dir, 'cd.iso'), configDrive);
  s.server.files.set('image.raw', { path: join(s.dir, 'image.raw'), truncateFirst: { count: 1, afterBytes: 2 * MiB + 77 } });
  s.server.files.set('cd.iso', { path: join(s.dir, 'cd.iso') });
  const r = await once(s, {
    command: 'deploy', commandId: 'd-1',
    deploy: {
      imageUrl: `${s.server.url}/files/image.raw`, checksum: sha256(image), checksumType: 'sha256', imageSizeBytes: image.length,
      rootDeviceHints: { serialNumber: 'virtio-serial-1' }, configDrive: { url: `${s.server.url}/files/cd.iso`, sha256: sha256(configDrive) },
    },
  });
  const posted = s.server.seen.filter((x) => x.path === '/ramdisk/v1/result').at(-1);
  assert.ok(posted !== undefined, r.stdout);
  const result = decodeRamdiskResult(posted.body);
  assert.equal(result.status, 'ok', `${result.message ?? ''}\n${r.stdout}`);
  const details = result.details as DeployResultDetails;
  assert.equal(details.image.bytes, image.length);
  assert.ok(details.image.attempts >= 2, 'the cut download was resumed');
  const ranges = s.server.seen.filter((x) => x.path === '/files/image.raw').map((x) => x.range);
  assert.equal(ranges[0], undefined);
  assert.match(ranges[1] ?? '', /^bytes=\d+-$/, 'the second request resumes');
  assert.ok(Number(/\d+/.exec(ranges[1]!)![0]) >= 2 * MiB, 'after what had arrived');
  assert.equal(s.server.seen.filter((x) => x.path === '/files/cd.iso').length, 1, 'the config drive was fetched over TLS');
  const vda = join(s.env.RACKSIDE_DEV!, 'vda');
  assert.deepEqual(readRange(vda, 512, image.length - 512), image.subarray(512), 'the image is on the disk');
  const cd = details.configDrive;
  assert.ok(cd !== null);
  assert.deepEqual(readRange(vda, cd.offsetBytes, configDrive.length), configDrive, 'the config drive partition holds it');
  assert.deepEqual(s.server.tlsErrors, []);
});

test('https rackside.url: a server certificate from another CA is refused; nothing is sent and nothing falls back to clear text', async (t) => {
  if (!requireTools(t, tools)) return;
  const [served, other] = [await bootCa(t), await bootCa(t)];
  const s = await setup(t, 'agent-tls-wrong-ca', served, other.caPem);
  const r = await once(s, { command: 'inspect', commandId: 'i-2' });
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stdout, /heartbeat to https:\/\/127\.0\.0\.1:\d+ failed/);
  assert.match(r.stdout, /curl: \(60\)/, 'curl could not verify the server');
  assert.deepEqual(s.server.seen, [], 'no request reached the server');
  const codes = s.server.tlsErrors.map((e) => e.code);
  assert.ok(codes.includes('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA'), `curl refused the handshake with "unknown CA": ${JSON.stringify(codes)}`);
  // A clear-text request on the TLS port would be an "http request" handshake error.
  assert.deepEqual(s.server.tlsErrors.filter((e) => e.code === 'ERR_SSL_HTTP_REQUEST'), []);
});

test('https rackside.url: the server certificate itself as ca.pem is accepted (an operator\'s chain: curl verifies a partial chain)', async (t) => {
  if (!requireTools(t, tools)) return;
  const ca = await bootCa(t);
  const leaf = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n/.exec(ca.chainPem)?.[0] ?? '';
  assert.notEqual(leaf, '');
  const s = await setup(t, 'agent-tls-leaf', ca, leaf);
  const r = await once(s);
  assert.equal(r.code, 0, r.stdout);
  assert.deepEqual(s.server.seen.map((x) => x.path), ['/ramdisk/v1/heartbeat']);
});

test('https rackside.url without curl, or without the CA: the agent says why and calls nothing', async (t) => {
  if (!requireTools(t, tools)) return;
  const ca = await bootCa(t);
  const noCurl = await setup(t, 'agent-tls-nocurl', ca, ca.caPem, false);
  const r1 = await once(noCurl, { command: 'inspect', commandId: 'i-3' });
  assert.equal(r1.code, 1, r1.stdout);
  assert.match(r1.stdout, /rackside-ramdisk: rackside\.url is https:\/\/127\.0\.0\.1:\d+ but this ramdisk has no curl .*not calling rackside/);
  const noCa = await setup(t, 'agent-tls-noca', ca, undefined);
  const r2 = await once(noCa, { command: 'inspect', commandId: 'i-4' });
  assert.equal(r2.code, 1, r2.stdout);
  assert.match(r2.stdout, /rackside-ramdisk: rackside\.url is https:\/\/127\.0\.0\.1:\d+ but .*ca\.pem is missing: .*not calling rackside/);
  for (const s of [noCurl, noCa]) {
    assert.deepEqual(s.server.seen, []);
    assert.deepEqual(s.server.tlsErrors, [], 'not even a handshake');
  }
});

test('https rackside.url: an http:// image or config drive URL is refused before anything is fetched', async (t) => {
  if (!requireTools(t, tools)) return;
  const ca = await bootCa(t);
  const s = await setup(t, 'agent-tls-plain-image', ca, ca.caPem);
  const plain = await startRamdiskServer(token);
  t.after(() => plain.close());
  writeFileSync(join(s.dir, 'image.raw'), Buffer.alloc(4096, 1));
  plain.files.set('image.raw', { path: join(s.dir, 'image.raw') });
  plain.files.set('cd.iso', { path: join(s.dir, 'image.raw') });
  const checksum = sha256(Buffer.alloc(4096, 1));
  await once(s, { command: 'deploy', commandId: 'd-2', deploy: { imageUrl: `${plain.url}/files/image.raw`, checksum, checksumType: 'sha256', rootDeviceHints: { deviceName: '/dev/vda' } } });
  await once(s, { command: 'deploy', commandId: 'd-3', deploy: { imageUrl: `${s.server.url}/files/image.raw`, checksum, checksumType: 'sha256', rootDeviceHints: { deviceName: '/dev/vda' }, configDrive: { url: `${plain.url}/files/cd.iso` } } });
  const results = s.server.seen.filter((x) => x.path === '/ramdisk/v1/result').map((x) => decodeRamdiskResult(x.body));
  assert.deepEqual(results.map((x) => [x.status, x.message]), [
    ['error', `image_url must be a https:// URL like rackside.url, got ${plain.url}/files/image.raw`],
    ['error', `configdrive_url must be a https:// URL like rackside.url, got ${plain.url}/files/cd.iso`],
  ]);
  assert.deepEqual(plain.seen, [], 'nothing was fetched in clear text');
});
