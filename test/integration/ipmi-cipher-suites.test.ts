// Cipher suite negotiation of the native IPMI driver against OpenIPMI's ipmi_sim on loopback,
// cross-checked with `ipmitool channel getciphers ipmi` against the same simulator: ipmi_sim lists
// no suite 17, so the driver proposes only 3 (one Open Session, no refused proposal), and a host
// pinned to 17 is refused up front with the simulator's list in the message.
// Needs ipmi_sim (openipmi) and ipmitool: skipped without them, failed under RACKSIDE_REQUIRE_INTEGRATION=1.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseBmcAddress } from '../../drivers/bmc-address.js';
import { BmcErrorCode, isBmcError, isPermanentBmcError } from '../../drivers/errors.js';
import { createIpmiDriver } from '../../drivers/ipmi/ipmi-driver.js';
import { startIpmiSim, type IpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { ipmitool, missingIpmiTools, requireIpmiTools } from '../lab/ipmi/ipmitool.js';

let sim: IpmiSim | undefined;

before(async () => {
  if (missingIpmiTools().length === 0) sim = await startIpmiSim();
});

after(async () => {
  await sim?.stop();
});

test('negotiation against ipmi_sim: its Get Channel Cipher Suites list (as ipmitool reads it) has no 17, so only 3 is proposed; a pin to 17 is refused naming that list', async (t) => {
  if (!requireIpmiTools(t)) return;
  assert.ok(sim !== undefined, 'the simulator started');
  const s = sim;
  const listing = await ipmitool(s, ['channel', 'getciphers', 'ipmi']);
  const ipmitoolIds = listing.split('\n').map((line) => /^(\d+)\s/.exec(line)?.[1]).filter((id): id is string => id !== undefined).map(Number);
  assert.ok(ipmitoolIds.includes(3) && !ipmitoolIds.includes(17), listing);
  const pinned = createIpmiDriver(parseBmcAddress(`ipmi://${s.host}:${s.port}`), { username: s.username, password: s.password },
    { ipmiCipherSuite: 17, keepaliveMs: 0 });
  try {
    // ipmitool prints records 0–11; ipmi_sim also lists 12–14 (HMAC-MD5 with MD5-128), which our decoder reads too.
    await assert.rejects(pinned.power.getPowerState(), (err: Error) => {
      const ours = /offers cipher suites ([\d, ]+), none of the allowed 17/.exec(err.message)?.[1]?.split(', ').map(Number) ?? [];
      return isBmcError(err, BmcErrorCode.unsupported) && isPermanentBmcError(err) && ipmitoolIds.every((id) => ours.includes(id))
        && ours.includes(3) && !ours.includes(17);
    });
  } finally {
    await pinned.close();
  }
  const negotiated = createIpmiDriver(parseBmcAddress(`ipmi://${s.host}:${s.port}`), { username: s.username, password: s.password }, { keepaliveMs: 0 });
  try {
    await negotiated.power.getPowerState();
    assert.equal(negotiated.session.cipherSuite, 3);
    assert.equal(negotiated.stats().retransmits, 0);
  } finally {
    await negotiated.close();
  }
});

test('a wrong password against ipmi_sim is a permanent AUTH error, as ipmitool fails too', async (t) => {
  if (!requireIpmiTools(t)) return;
  assert.ok(sim !== undefined, 'the simulator started');
  const s = sim;
  const wrong = createIpmiDriver(parseBmcAddress(`ipmi://${s.host}:${s.port}`), { username: s.username, password: 'not-the-password' }, { keepaliveMs: 0 });
  try {
    await assert.rejects(wrong.power.getPowerState(), (err: Error) => isBmcError(err, BmcErrorCode.auth) && isPermanentBmcError(err)
      && !err.message.includes('not-the-password'));
  } finally {
    await wrong.close();
  }
  await assert.rejects(ipmitool({ ...s, password: 'not-the-password' }, ['chassis', 'power', 'status']));
});
