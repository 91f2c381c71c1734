// Cipher suite negotiation against field-shaped BMCs (the in-process fake lanplus BMC): a BMC
// that answers a suite-17 proposal with suite 3's algorithms (1/1/1) works, and with a wrong
// password says so (a permanent AUTH error with the BMC's reason) instead of a protocol error;
// the BMC's Get Channel Cipher Suites list narrows the proposals; a pinned suite is never
// downgraded; 0 is never used. Plus the pure codec and planner.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBmcAddress } from '../../../drivers/bmc-address.js';
import { registerBuiltinDrivers } from '../../../drivers/builtin-drivers.js';
import { BmcErrorCode, isBmcError, isPermanentBmcError, isTransientBmcError } from '../../../drivers/errors.js';
import {
  decodeCipherSuiteRecords, encodeGetChannelCipherSuites, judgeOpenSessionAnswer, parseAllowedCipherSuites, planCipherSuites,
} from '../../../drivers/ipmi/cipher-suites.js';
import { createIpmiDriver } from '../../../drivers/ipmi/ipmi-driver.js';
import { IpmiSession } from '../../../drivers/ipmi/ipmi-session.js';
import { cipherSuite } from '../../../drivers/ipmi/rakp.js';
import { DriverRegistry } from '../../../drivers/registry.js';
import { FakeLanplusBmc } from '../../lab/ipmi/fake-lanplus-bmc.js';
import { chassisStatus, FAKE_BMC_PASSWORD, onCleanup, openFakeSession } from '../../lab/ipmi/fake-session.js';

const PASSWORD = FAKE_BMC_PASSWORD;
const setup = openFakeSession;
const status = chassisStatus;

test('a BMC answering a suite-17 proposal with suite 3 (1/1/1) is followed: the session runs on suite 3', async () => {
  const { bmc, session } = await setup({ answerSuite: 3 });
  bmc.power = true;
  assert.equal((await status(session)).powerOn, true);
  assert.equal(session.cipherSuite, 3);
  assert.deepEqual(bmc.proposals, [17]);
  assert.deepEqual(bmc.openedSuites, [3]);
  assert.equal(bmc.cipherSuiteListRequests, 1);
});

test('the same BMC with a wrong password: a permanent AUTH error naming the cause, not a protocol error', async () => {
  const { bmc } = await setup({ answerSuite: 3 });
  const wrong = new IpmiSession({ host: '127.0.0.1', port: bmc.port, username: 'admin', password: 'not-it', attemptTimeoutMs: 150, keepaliveMs: 0 });
  onCleanup(() => wrong.close());
  await assert.rejects(status(wrong), (err: Error) => isBmcError(err, BmcErrorCode.auth) && /authentication failed: RAKP 2 HMAC mismatch/.test(err.message)
    && isPermanentBmcError(err) && !isTransientBmcError(err) && !err.message.includes('not-it'));
  const unknown = new IpmiSession({ host: '127.0.0.1', port: bmc.port, username: 'mallory', password: PASSWORD, attemptTimeoutMs: 150, keepaliveMs: 0 });
  onCleanup(() => unknown.close());
  // The BMC's own reason (RAKP 2 status 0x0D, unauthorized name) is in the message.
  await assert.rejects(status(unknown), (err: Error) => isBmcError(err, BmcErrorCode.auth) && /0x0D \(/.test(err.message) && isPermanentBmcError(err));
});

test('the BMC list narrows the proposals: a suite-3-only list gets one proposal of 3, no refused 17', async () => {
  const { bmc, session } = await setup({ cipherSuites: [3], cipherSuiteList: [0, 1, 2, 3] });
  await status(session);
  assert.equal(session.cipherSuite, 3);
  assert.deepEqual(bmc.proposals, [3]);
});

test('a BMC without Get Channel Cipher Suites (0xC1, or silent) still gets 17, then 3', async () => {
  for (const list of ['unsupported', 'silent'] as const) {
    const { bmc, session } = await setup({ cipherSuites: [3], shortErrors: true, cipherSuiteList: list });
    await status(session);
    assert.equal(session.cipherSuite, 3, list);
    assert.deepEqual(bmc.proposals, ['3/4/1', 3], list);
  }
});

test('a BMC listing only suites rackside refuses (0, 1, 2) gets no Open Session: a permanent UNSUPPORTED error naming its list', async () => {
  const { bmc, session } = await setup({ cipherSuites: [], cipherSuiteList: [0, 1, 2] });
  await assert.rejects(status(session), (err: Error) => isBmcError(err, BmcErrorCode.unsupported) && /offers cipher suites 0, 1, 2/.test(err.message)
    && isPermanentBmcError(err));
  assert.deepEqual(bmc.proposals, []);
});

test('a pinned suite 17 is never downgraded: a suite-3 answer is refused as UNSUPPORTED, permanent', async () => {
  const { bmc, session } = await setup({ answerSuite: 3 }, { cipherSuites: [17] });
  await assert.rejects(status(session), (err: Error) => isBmcError(err, BmcErrorCode.unsupported)
    && /answered algorithms 1\/1\/1 instead of cipher suite 17's: cipher suite 3's, which is not allowed here \(allowed: 17\)/.test(err.message)
    && isPermanentBmcError(err));
  assert.equal(bmc.sessionCount, 0);
});

test('the driver takes a per-host pin from DriverOptions.ipmiCipherSuite; 0 and junk are refused when it is built', async () => {
  const bmc = await FakeLanplusBmc.start({ users: [{ name: 'admin', password: PASSWORD }] });
  onCleanup(() => bmc.stop());
  const address = parseBmcAddress(`ipmi://127.0.0.1:${bmc.port}`);
  const pinned = createIpmiDriver(address, { username: 'admin', password: PASSWORD }, { ipmiCipherSuite: '3', keepaliveMs: 0, attemptTimeoutMs: 150 });
  onCleanup(() => pinned.close());
  assert.equal(await pinned.power.getPowerState(), 'off');
  assert.equal(pinned.stats().cipherSuite, 3);
  assert.deepEqual(bmc.proposals, [3]);
  for (const bad of [0, '0', '1', 'seventeen', '']) {
    assert.throws(() => createIpmiDriver(address, { username: 'admin', password: PASSWORD }, { ipmiCipherSuite: bad }),
      (err: Error) => isBmcError(err, BmcErrorCode.unsupported) && /only 17 and 3 are accepted/.test(err.message) && isPermanentBmcError(err));
  }
});

test('Get Channel Cipher Suites: request bytes and record decoding (standard and OEM records, split pages)', () => {
  assert.deepEqual([...encodeGetChannelCipherSuites(2).data], [0x0e, 0x00, 0x82]);
  const records = Buffer.from([
    0xc0, 0x00, 0x00, 0x40, 0x80, 0xc0, 0x03, 0x01, 0x41, 0x81, 0xc1, 0x50, 0x57, 0x01, 0x00, 0x03, 0x44, 0x81, 0xc0, 0x11, 0x03, 0x44, 0x81,
  ]);
  const listed = decodeCipherSuiteRecords(records);
  assert.deepEqual(listed.map((r) => [r.id, r.oemIana, r.authenticationAlgorithm, r.integrityAlgorithm, r.confidentialityAlgorithm]), [
    [0, undefined, 0, 0, 0], [3, undefined, 1, 1, 1], [0x50, 343, 3, 4, 1], [17, undefined, 3, 4, 1],
  ]);
});

test('planning and judging: operator order first, BMC list narrows, never 0, never an unallowed downgrade', () => {
  const list = (ids: number[]): ReturnType<typeof decodeCipherSuiteRecords> => decodeCipherSuiteRecords(Buffer.concat(ids.map((id) => {
    const a = id === 17 ? [3, 4, 1] : id === 3 ? [1, 1, 1] : [0, 0, 0];
    return Buffer.from([0xc0, id, a[0] ?? 0, 0x40 | (a[1] ?? 0), 0x80 | (a[2] ?? 0)]);
  })));
  const ids = (plan: ReturnType<typeof planCipherSuites>): number[] | string => ('propose' in plan ? plan.propose.map((s) => s.id) : plan.refused);
  assert.deepEqual(ids(planCipherSuites([17, 3], list([0, 3, 17]))), [17, 3]);
  assert.deepEqual(ids(planCipherSuites([3, 17], list([17, 3]))), [3, 17]);
  assert.deepEqual(ids(planCipherSuites([17, 3], list([0, 1, 2, 3]))), [3]);
  assert.deepEqual(ids(planCipherSuites([17, 3], undefined)), [17, 3]);
  assert.match(String(ids(planCipherSuites([17], list([0, 3])))), /offers cipher suites 0, 3, none of the allowed 17/);
  assert.ok('suite' in judgeOpenSessionAnswer(cipherSuite(17), [17, 3], { authenticationAlgorithm: 1, integrityAlgorithm: 1, confidentialityAlgorithm: 1 }));
  const none = judgeOpenSessionAnswer(cipherSuite(17), [17, 3], { authenticationAlgorithm: 0, integrityAlgorithm: 0, confidentialityAlgorithm: 0 });
  assert.ok('refused' in none && none.none && /never cipher suite 0/.test(none.refused));
  assert.deepEqual(parseAllowedCipherSuites('17, 3'), [17, 3]);
  assert.deepEqual(parseAllowedCipherSuites(3), [3]);
  assert.throws(() => parseAllowedCipherSuites([17, 0]), /cipher suite 0 refused/);
});

test('the agent-wide setting reaches every ipmi driver through registerBuiltinDrivers; a host pin wins', async () => {
  const bmc = await FakeLanplusBmc.start({ users: [{ name: 'admin', password: PASSWORD }], answerSuite: 3 });
  onCleanup(() => bmc.stop());
  const registry = new DriverRegistry();
  registerBuiltinDrivers(registry, { ipmi: { cipherSuites: [17], keepaliveMs: 0, attemptTimeoutMs: 150 } });
  const agentWide = registry.create(`ipmi://127.0.0.1:${bmc.port}`, { username: 'admin', password: PASSWORD });
  onCleanup(() => agentWide.close());
  await assert.rejects(agentWide.power.getPowerState(), (err: Error) => isBmcError(err, BmcErrorCode.unsupported) && /allowed: 17\)/.test(err.message));
  const pinned = registry.create(`ipmi://127.0.0.1:${bmc.port}`, { username: 'admin', password: PASSWORD }, { ipmiCipherSuite: 3 });
  onCleanup(() => pinned.close());
  assert.equal(await pinned.power.getPowerState(), 'off');
});
