/**
 * rackside doctor's boot HTTPS lines (agent/doctor/checks-https.ts) over real certificates: the
 * boot CA's (agent/boot/boot-ca.ts, made with openssl) and an operator's file, read by
 * agent/doctor/probe-https.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfigYaml } from '../../../agent/config.js';
import { ensureBootCertificate } from '../../../agent/boot/boot-ca.js';
import { checkBootHttps } from '../../../agent/doctor/checks-https.js';
import { probeBootHttps } from '../../../agent/doctor/probe-https.js';

const DAY_MS = 86_400_000;

async function scratch(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-doctor-https-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function config(stateDir: string, http: string): ReturnType<typeof parseConfigYaml> {
  return parseConfigYaml(`agent: { stateDir: ${stateDir} }\nprovisioning: { address: 10.250.0.1 }\nhttp:\n${http}`, 't.yaml', { agentId: 'rack-t' });
}

test('no http.tls: no boot HTTPS lines at all', async (t) => {
  const dir = await scratch(t);
  const c = config(dir, '  listen: 0.0.0.0:8081\n');
  assert.equal(await probeBootHttps(c, '10.250.0.1'), undefined);
  assert.deepEqual(checkBootHttps(c, undefined, '10.250.0.1'), []);
});

test('tls: auto before the agent ran: ok, the agent issues the certificate at start; tlsBoot with the stub missing fails with the package', async (t) => {
  const dir = await scratch(t);
  const c = config(dir, '  tls: auto\n  tlsBoot: on\n');
  const lines = checkBootHttps(c, await probeBootHttps(c, '10.250.0.1', Date.now(), join(dir, 'no-stub.efi.stub')), '10.250.0.1');
  assert.deepEqual(lines.map((l) => [l.check, l.status]), [['boot HTTPS certificate', 'ok'], ['unified image stub', 'fail']]);
  assert.match(lines[0]?.detail ?? '', /issues it from its boot CA when it starts/);
  assert.equal(lines[1]?.fix, 'apt-get install systemd-boot-efi');
  assert.match(lines[1].detail, /plain iPXE chain/);
});

test('tls: auto with the boot CA\'s certificate: ok for the boot address, fails for another, fails once expired', async (t) => {
  const dir = await scratch(t);
  await ensureBootCertificate(dir, ['10.250.0.1', 'rack-head']);
  const stub = join(dir, 'stub.efi.stub');
  await writeFile(stub, 'MZ');
  const c = config(dir, '  tls: auto\n  tlsBoot: on\n');
  const ok = checkBootHttps(c, await probeBootHttps(c, '10.250.0.1', Date.now(), stub), '10.250.0.1');
  assert.deepEqual(ok.map((l) => l.status), ['ok', 'ok']);
  assert.match(ok[0]?.detail ?? '', /server\.crt \(.*\), valid until \d{4}-.*, for 10\.250\.0\.1$/);
  const byName = checkBootHttps(c, await probeBootHttps(c, 'rack-head'), 'rack-head');
  assert.equal(byName[0]?.status, 'ok', 'a DNS name in the certificate counts');
  const other = checkBootHttps(c, await probeBootHttps(c, '10.9.9.9'), '10.9.9.9');
  assert.equal(other[0]?.status, 'fail');
  assert.match(other[0].detail, /not valid for 10\.9\.9\.9, the host in the boot URLs/);
  const later = checkBootHttps(c, await probeBootHttps(c, '10.250.0.1', Date.now() + 3000 * DAY_MS), '10.250.0.1');
  assert.equal(later[0]?.status, 'fail');
  assert.match(later[0].detail, /expired/);
});

test('an operator certificate: near expiry warns, unreadable or not PEM fails naming the file', async (t) => {
  const dir = await scratch(t);
  const issued = await ensureBootCertificate(join(dir, 'ca'), ['10.250.0.1']);
  const certPath = join(dir, 'boot.pem');
  await writeFile(certPath, issued.chainPem);
  await writeFile(join(dir, 'boot.key'), issued.keyPem);
  const c = config(dir, `  tls: { cert: ${certPath}, key: ${join(dir, 'boot.key')} }\n`);
  const probe = await probeBootHttps(c, '10.250.0.1');
  assert.ok(probe?.certificate !== undefined);
  const daysLeft = probe.certificate.daysLeft;
  const soon = checkBootHttps(c, await probeBootHttps(c, '10.250.0.1', Date.now() + (daysLeft - 10) * DAY_MS), '10.250.0.1');
  assert.equal(soon[0]?.status, 'warn');
  assert.match(soon[0].detail, /9 days left|10 days left/);
  assert.equal(soon.length, 1, 'no stub line without tlsBoot');
  await writeFile(certPath, 'not a certificate');
  const garbage = checkBootHttps(c, await probeBootHttps(c, '10.250.0.1'), '10.250.0.1');
  assert.equal(garbage[0]?.status, 'fail');
  assert.match(garbage[0].detail, /boot\.pem: not a PEM certificate/);
  await rm(certPath);
  const missing = checkBootHttps(c, await probeBootHttps(c, '10.250.0.1'), '10.250.0.1');
  assert.equal(missing[0]?.status, 'fail');
  assert.match(missing[0].fix, /http\.tls\.cert/);
});
