// The native IPMI driver against OpenIPMI's ipmi_sim on loopback, every result cross-checked
// with `ipmitool -I lanplus -C 3` against the same simulator: power on/off/cycle/soft/reset,
// boot device (ipmi_sim reports the device only: the valid/EFI/persistent bits do not read
// back), Get Device ID, FRU, sensors, authentication failures, cipher suites (17 refused by the
// simulator, 0 offered by it but never used by us), session reuse.
// Needs ipmi_sim (openipmi) and ipmitool: skipped without them, failed under RACKSIDE_REQUIRE_INTEGRATION=1.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { after, before, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseBmcAddress } from '../../drivers/bmc-address.js';
import { BmcErrorCode, isBmcError } from '../../drivers/errors.js';
import { createIpmiDriver, type IpmiDriverImplementation } from '../../drivers/ipmi/ipmi-driver.js';
import { IpmiSession } from '../../drivers/ipmi/ipmi-session.js';
import { decodeOpenSessionResponse, encodeOpenSessionRequest } from '../../drivers/ipmi/rakp-messages.js';
import { decodeSessionPacket, encodeSessionPacket, PayloadType } from '../../drivers/ipmi/session-packet.js';
import { DEFAULT_SENSORS, startIpmiSim, type IpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { ipmitool, missingIpmiTools, requireIpmiTools, runIpmitool } from '../lab/ipmi/ipmitool.js';

let sim: IpmiSim | undefined;
let driver: IpmiDriverImplementation | undefined;

before(async () => {
  if (missingIpmiTools().length > 0) return;
  sim = await startIpmiSim();
  driver = createIpmiDriver(parseBmcAddress(`ipmi://${sim.host}:${sim.port}`), { username: sim.username, password: sim.password }, { keepaliveMs: 0 });
});

after(async () => {
  await driver?.close();
  await sim?.stop();
});

/** The simulator and driver, or undefined after skipping `t`. */
function lab(t: TestContext): { sim: IpmiSim; driver: IpmiDriverImplementation } | undefined {
  if (!requireIpmiTools(t)) return undefined;
  assert.ok(sim !== undefined && driver !== undefined, 'the simulator started');
  return { sim, driver };
}

async function ipmitoolPower(s: IpmiSim): Promise<'on' | 'off'> {
  const out = await ipmitool(s, ['chassis', 'power', 'status']);
  assert.match(out, /Chassis Power is (on|off)/);
  return out.includes('is on') ? 'on' : 'off';
}

async function waitPower(d: IpmiDriverImplementation, state: 'on' | 'off'): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await d.power.getPowerState()) === state) return;
    await sleep(100);
  }
  assert.fail(`power did not become ${state}`);
}

test('power on, off, soft-off, reset and cycle agree with ipmitool and the chassis program', async (t) => {
  const l = lab(t);
  if (l === undefined) return;
  const { sim: s, driver: d } = l;
  await d.power.setPower('on');
  assert.equal(await d.power.getPowerState(), 'on');
  assert.equal(await ipmitoolPower(s), 'on');
  assert.equal((await s.readChassis()).power, '1');

  await d.power.setPower('off');
  assert.equal(await d.power.getPowerState(), 'off');
  assert.equal(await ipmitoolPower(s), 'off');

  await ipmitool(s, ['chassis', 'power', 'on']); // changed by ipmitool, seen by the driver
  assert.equal(await d.power.getPowerState(), 'on');

  await d.power.setPower('soft-off');
  assert.equal(await ipmitoolPower(s), 'off');
  assert.ok((await s.readChassis()).calls.includes('set shutdown 1'));

  await d.power.setPower('reset'); // off → on
  assert.equal(await ipmitoolPower(s), 'on');
  await d.power.setPower('reset'); // on → hard reset
  assert.ok((await s.readChassis()).calls.includes('set reset 1'));
  assert.equal(await ipmitoolPower(s), 'on');

  await d.power.setPower('cycle'); // ipmi_sim powers off, then on again about a second later
  const calls = (await s.readChassis()).calls;
  assert.equal(calls.at(-1), 'set power 0');
  await waitPower(d, 'on');
  assert.equal(await ipmitoolPower(s), 'on');
});

test('boot device: what ipmi_sim reports back, and what its chassis program receives', async (t) => {
  const l = lab(t);
  if (l === undefined) return;
  const { sim: s, driver: d } = l;
  const cases = { pxe: ['pxe', 'Force PXE'], disk: ['default', 'Force Boot from default Hard-Drive'], cdrom: ['cdrom', 'Force Boot from CD/DVD'], bios: ['bios', 'Force Boot into BIOS Setup'] } as const;
  for (const [device, [programSees, ipmitoolSays]] of Object.entries(cases)) {
    await d.bootDevice.setBootDevice(device as keyof typeof cases, { mode: 'uefi', persistent: true });
    assert.equal((await s.readChassis()).boot, programSees, device);
    const param = await ipmitool(s, ['chassis', 'bootparam', 'get', '5']);
    assert.ok(param.includes(ipmitoolSays), `${device}: ${param}`);
    // ipmi_sim does not keep the valid/EFI/persistent bits: ipmitool and the driver both see them clear.
    assert.match(param, /Boot Flag Invalid/);
    assert.match(param, /Options apply to only next boot/);
    assert.match(param, /BIOS PC Compatible \(legacy\) boot/);
    assert.deepEqual(await d.bootDevice.getBootDevice(), { device, persistent: false, mode: undefined });
  }
  await ipmitool(s, ['chassis', 'bootdev', 'cdrom', 'options=efiboot']);
  assert.equal((await d.bootDevice.getBootDevice()).device, 'cdrom');
});

test('Get Device ID and FRU agree with ipmitool mc info and fru print', async (t) => {
  const l = lab(t);
  if (l === undefined) return;
  const { sim: s, driver: d } = l;
  const info = await d.info.getBmcInfo();
  const mc = await ipmitool(s, ['mc', 'info']);
  const field = (text: string, name: string): string => (new RegExp(`^\\s*${name}\\s*:\\s*(.*)$`, 'm').exec(text)?.[1] ?? '').trim();
  assert.equal(info.firmwareVersion, field(mc, 'Firmware Revision'));
  assert.equal(info.protocolVersion, `IPMI ${field(mc, 'IPMI Version')}`);
  assert.equal(field(mc, 'Manufacturer ID'), '4753');
  assert.equal(info.vendor, 'MontaVista (OpenIPMI)');
  assert.deepEqual(info.probed, ['power', 'bootDevice', 'inventory', 'info']);
  const fru = await d.readFru();
  const board = fru?.board;
  const product = fru?.product;
  assert.ok(board !== undefined && product !== undefined);
  const printed = await ipmitool(s, ['fru', 'print', '0']);
  const pairs: [string | undefined, string][] = [
    [board.manufacturer, 'Board Mfg'], [board.productName, 'Board Product'], [board.serialNumber, 'Board Serial'],
    [board.partNumber, 'Board Part Number'], [product.manufacturer, 'Product Manufacturer'], [product.productName, 'Product Name'],
    [product.partNumber, 'Product Part Number'], [product.version, 'Product Version'], [product.serialNumber, 'Product Serial'],
    [product.assetTag, 'Product Asset Tag'],
  ];
  for (const [ours, label] of pairs) assert.equal(ours, field(printed, label), label);
  assert.equal(board.manufacturedAt?.getTime(), new Date(field(printed, 'Board Mfg Date')).getTime());
  assert.deepEqual((await d.inventory.getInventory()).system, { manufacturer: 'Rackside', model: 'Sim Server', serialNumber: 'SN-12345', uuid: undefined });
});

test('sensors agree with ipmitool sdr list', async (t) => {
  const l = lab(t);
  if (l === undefined) return;
  const { sim: s, driver: d } = l;
  const sensors = await d.readSensors();
  const listed = new Map((await ipmitool(s, ['sdr', 'list'])).split('\n').filter((line) => line.includes('|'))
    .map((line) => line.split('|').map((part) => part.trim())).map(([name = '', reading = '']) => [name, reading]));
  for (const expected of DEFAULT_SENSORS) {
    const got = sensors.find((x) => x.name === expected.name);
    assert.ok(got, expected.name);
    assert.equal(got.value, expected.value);
    assert.equal(got.unit, expected.unit);
    assert.equal(listed.get(expected.name), `${expected.value} ${expected.unit}`);
  }
  const presence = sensors.find((x) => x.name === 'PSU1 Presence');
  assert.equal(presence?.states, 0x01);
  assert.equal(listed.get('PSU1 Presence'), '0x01');
});

test('wrong password and unknown user: AUTH errors here, failures for ipmitool too', async (t) => {
  const l = lab(t);
  if (l === undefined) return;
  const { sim: s } = l;
  const address = parseBmcAddress(`ipmi://${s.host}:${s.port}`);
  const wrong = createIpmiDriver(address, { username: s.username, password: 'not-it-at-all' }, { attemptTimeoutMs: 500 });
  const unknown = createIpmiDriver(address, { username: 'nobody', password: s.password }, { attemptTimeoutMs: 500 });
  try {
    await assert.rejects(wrong.power.getPowerState(), (err: Error) => isBmcError(err, BmcErrorCode.auth) && /RAKP 2 HMAC mismatch/.test(err.message) && !err.message.includes('not-it-at-all'));
    await assert.rejects(unknown.power.getPowerState(), (err: Error) => isBmcError(err, BmcErrorCode.auth) && /unknown user/.test(err.message));
  } finally {
    await wrong.close();
    await unknown.close();
  }
  assert.notEqual((await runIpmitool({ ...s, password: 'not-it-at-all' }, ['chassis', 'power', 'status'])).code, 0);
  assert.notEqual((await runIpmitool({ ...s, username: 'nobody' }, ['chassis', 'power', 'status'])).code, 0);
});

test('cipher suites: 17 refused by ipmi_sim, 3 negotiated; 0 offered by ipmi_sim but never used by us', async (t) => {
  const l = lab(t);
  if (l === undefined) return;
  const { sim: s, driver: d } = l;
  assert.notEqual((await runIpmitool(s, ['chassis', 'power', 'status'], 17)).code, 0);
  await d.power.getPowerState();
  assert.equal(d.session.cipherSuite, 3);
  // The simulator does accept cipher suite 0 — proven by a raw Open Session proposing "none"…
  const probe = createSocket('udp4');
  const answer = new Promise<Buffer>((resolve) => { probe.once('message', resolve); });
  probe.send(encodeSessionPacket({ payloadType: PayloadType.openSessionRequest, sessionId: 0, sequence: 0, payload: encodeOpenSessionRequest({
    messageTag: 1, maxPrivilege: 4, consoleSessionId: 0x0bad0bad, authenticationAlgorithm: 0, integrityAlgorithm: 0, confidentialityAlgorithm: 0,
  }) }), s.port, s.host);
  const response = decodeOpenSessionResponse(decodeSessionPacket(await answer).payload);
  probe.close();
  assert.equal(response.status, 0, 'ipmi_sim accepts cipher suite 0 (a real BMC should not)');
  assert.equal(response.authenticationAlgorithm, 0);
  // …and by ipmitool -C 0; rackside cannot even be configured to use it.
  assert.equal((await runIpmitool(s, ['chassis', 'power', 'status'], 0)).code, 0);
  assert.throws(() => new IpmiSession({ host: s.host, port: s.port, username: s.username, password: s.password, cipherSuites: [0] }), /never 0/);
  assert.throws(() => createIpmiDriver(parseBmcAddress(`ipmi://${s.host}:${s.port}`), { username: s.username, password: s.password }, { cipherSuites: [3, 0] }), /only 17 and 3/);
});

test('one session is reused across many requests', async (t) => {
  const l = lab(t);
  if (l === undefined) return;
  const { sim: s } = l;
  const d = createIpmiDriver(parseBmcAddress(`ipmi://${s.host}:${s.port}`), { username: s.username, password: s.password }, { keepaliveMs: 0 });
  try {
    for (let i = 0; i < 20; i++) await d.power.getPowerState();
    const stats = d.stats();
    assert.equal(stats.sessionsOpened, 1);
    assert.equal(stats.retransmits, 0);
    assert.equal(stats.received, stats.sent);
    await d.session.ping();
  } finally {
    await d.close();
  }
});
