// IpmiSession against an in-process fake lanplus BMC on loopback: cipher suite negotiation
// (17, then 3, never 0), authentication failures, forged datagrams, retries, busy codes,
// expiry and reopen, keepalive, close, unreachable BMCs, serialization.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BmcErrorCode, isBmcError } from '../../../drivers/errors.js';
import { decodeGetDeviceId, encodeGetDeviceId } from '../../../drivers/ipmi/commands.js';
import { IpmiCompletionCodeError, IpmiSession } from '../../../drivers/ipmi/ipmi-session.js';
import { chassisStatus, FAKE_BMC_PASSWORD, onCleanup, openFakeSession } from '../../lab/ipmi/fake-session.js';

const PASSWORD = FAKE_BMC_PASSWORD;
const setup = openFakeSession;
const status = chassisStatus;

test('negotiates cipher suite 17 when the BMC offers it', async () => {
  const { bmc, session } = await setup();
  bmc.power = true;
  assert.equal((await status(session)).powerOn, true);
  assert.equal(session.cipherSuite, 17);
  assert.deepEqual(bmc.openedSuites, [17]);
  assert.equal(session.stats().sessionsOpened, 1);
});

test('falls back to cipher suite 3 when 17 is refused (ipmi_sim-style two-byte refusal)', async () => {
  const { bmc, session } = await setup({ cipherSuites: [3], shortErrors: true });
  await status(session);
  assert.equal(session.cipherSuite, 3);
  assert.deepEqual(bmc.openedSuites, [3]);
});

test('a BMC answering Open Session with "none" algorithms (cipher suite 0) is refused', async () => {
  const { bmc, session } = await setup({ cipherSuites: [0] });
  await assert.rejects(status(session), (err: Error) => isBmcError(err, BmcErrorCode.protocol) && /never cipher suite 0/.test(err.message));
  assert.equal(bmc.sessionCount, 0);
  assert.equal(session.cipherSuite, undefined);
});

test('cipher suite 0 (or anything but 17 and 3) cannot even be configured', () => {
  for (const suites of [[0], [3, 0], [1], [2], []]) {
    assert.throws(() => new IpmiSession({ host: '127.0.0.1', username: 'u', password: 'p', cipherSuites: suites }), /only 17 and 3/);
  }
});

test('a BMC offering no acceptable suite gives a clear error', async () => {
  const { session } = await setup({ cipherSuites: [] });
  await assert.rejects(status(session), (err: Error) => isBmcError(err, BmcErrorCode.unsupported) && /tried 17, 3/.test(err.message));
});

test('wrong password and unknown user are AUTH errors that never contain the password', async () => {
  const { bmc } = await setup();
  const wrong = new IpmiSession({ host: '127.0.0.1', port: bmc.port, username: 'admin', password: 'not-the-password', attemptTimeoutMs: 150 });
  const unknown = new IpmiSession({ host: '127.0.0.1', port: bmc.port, username: 'mallory', password: PASSWORD, attemptTimeoutMs: 150 });
  onCleanup(() => wrong.close(), () => unknown.close());
  await assert.rejects(status(wrong), (err: Error) => isBmcError(err, BmcErrorCode.auth) && /RAKP 2 HMAC mismatch/.test(err.message)
    && !err.message.includes('not-the-password') && err.message.includes(`127.0.0.1:${bmc.port}`));
  await assert.rejects(status(unknown), (err: Error) => isBmcError(err, BmcErrorCode.auth) && /unknown user/.test(err.message) && !err.message.includes(PASSWORD));
  const long = new IpmiSession({ host: '127.0.0.1', port: bmc.port, username: 'admin', password: 'x'.repeat(21) });
  onCleanup(() => long.close());
  await assert.rejects(status(long), (err: Error) => isBmcError(err, BmcErrorCode.auth) && /20 bytes/.test(err.message));
});

test('forged datagrams are dropped and counted; the genuine answer still wins', async () => {
  const { bmc, session } = await setup();
  await status(session);
  bmc.knobs.forgeries.push('wrong-hmac', 'wrong-session', 'truncated', 'unauthenticated', 'garbage');
  bmc.power = true;
  assert.equal((await status(session)).powerOn, true);
  const s1 = session.stats().dropped;
  assert.equal(s1.integrity, 1);
  assert.equal(s1.sessionId, 1);
  assert.equal(s1.truncated, 1);
  assert.equal(s1.unauthenticated, 1);
  const total = Object.values(s1).reduce((a, b) => a + b, 0);
  assert.equal(total, 5, JSON.stringify(s1));
  bmc.knobs.forgeries.push('replay');
  bmc.power = false;
  assert.equal((await status(session)).powerOn, false);
  assert.equal(session.stats().dropped.replay, 1);
  bmc.knobs.forgeries.push('duplicate');
  await status(session);
  await status(session);
  const s3 = session.stats().dropped;
  assert.equal(s3.replay + s3.unmatched, 2, 'the duplicate arrives late: unmatched or replay');
});

test('lost requests are retransmitted; a busy BMC is a BUSY error', async () => {
  const { bmc, session } = await setup();
  await status(session);
  bmc.knobs.dropRequests = 2;
  await status(session);
  assert.equal(session.stats().retransmits, 2);
  bmc.knobs.busyResponses = 1;
  await assert.rejects(status(session), (err: Error) => err instanceof IpmiCompletionCodeError && err.completionCode === 0xc0
    && isBmcError(err, BmcErrorCode.busy) && /node busy/.test(err.message));
  assert.equal((await session.call(encodeGetDeviceId(), decodeGetDeviceId)).manufacturerId, 674);
});

test('a session the BMC expired is reopened once, transparently', async () => {
  const { bmc, session } = await setup();
  await status(session);
  bmc.expireSessions();
  await status(session);
  const s = session.stats();
  assert.equal(s.sessionsOpened, 2);
  assert.equal(s.sessionsReopened, 1);
  assert.equal(s.timeouts, 1);
});

test('keepalive sends Get Device ID while idle', async () => {
  const { session } = await setup({}, { keepaliveMs: 30 });
  await session.open();
  for (let i = 0; i < 100 && session.stats().keepalives < 2; i++) await sleep(20);
  assert.ok(session.stats().keepalives >= 2);
  assert.equal(session.stats().sessionsOpened, 1);
});

test('close sends Close Session once; the session is then unusable', async () => {
  const { bmc, session } = await setup();
  await status(session);
  await session.close();
  await session.close();
  assert.equal(bmc.closeSessions, 1);
  assert.equal(bmc.sessionCount, 0);
  await assert.rejects(status(session), /closed/);
});

test('nobody listening → UNREACHABLE fast; a silent BMC → UNREACHABLE after the retries', async () => {
  const probe = createSocket('udp4');
  await new Promise<void>((resolve) => { probe.bind(0, '127.0.0.1', resolve); });
  const port = probe.address().port;
  await new Promise<void>((resolve) => { probe.close(() => { resolve(); }); });
  const refused = new IpmiSession({ host: '127.0.0.1', port, username: 'admin', password: PASSWORD, attemptTimeoutMs: 2000 });
  onCleanup(() => refused.close());
  await assert.rejects(status(refused), (err: Error) => isBmcError(err, BmcErrorCode.unreachable) && err.message.includes(`127.0.0.1:${port}`));
  const { bmc, session } = await setup();
  bmc.knobs.silent = true;
  await assert.rejects(status(session), (err: Error) => isBmcError(err, BmcErrorCode.unreachable) && /3 attempt/.test(err.message));
  assert.equal(session.stats().sent, 3);
});

test('concurrent calls are serialized over one session and all answered', async () => {
  const { bmc, session } = await setup();
  bmc.power = true;
  const results = await Promise.all(Array.from({ length: 20 }, () => status(session)));
  assert.ok(results.every((r) => r.powerOn));
  assert.equal(session.stats().sessionsOpened, 1);
  assert.equal(session.stats().retransmits, 0);
});

test('ASF presence ping', async () => {
  const { session } = await setup();
  const pong = await session.ping();
  assert.equal(pong.supportsIpmi, true);
  assert.equal(pong.oemIana, 4542);
});
