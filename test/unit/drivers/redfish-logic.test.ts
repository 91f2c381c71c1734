// Pure pieces of the Redfish driver: BIOS validation in metal3's order and change planning, HTTP
// status / transport failure → BmcError mapping, virtual media slot choice, RAID target matching,
// firmware component names, vendor quirks by scheme.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BmcErrorCode, parseBmcAddress, raidTargetMatches, type BiosAttributeSchema } from '../../../drivers/index.js';
import { GENERIC_QUIRKS } from '../../../drivers/redfish/vendors/quirks.js';
import { IDRAC_QUIRKS } from '../../../drivers/redfish/vendors/idrac.js';
import { ILO_QUIRKS } from '../../../drivers/redfish/vendors/ilo.js';
import { RedfishTlsError } from '../../../drivers/redfish/http-errors.js';
import { checkBiosValue } from '../../../drivers/bios-value.js';
import { deviceOfSlot, pickSlot } from '../../../drivers/redfish/media.js';
import { encodeBiosValue, pendingBiosValues, planBiosChanges } from '../../../drivers/redfish/bios-settings.js';
import { firmwareComponentOf } from '../../../drivers/redfish/services.js';
import { quirksForAddress, vendorOf } from '../../../drivers/redfish/redfish-driver.js';
import { raidLevelOfType, raidTypeOfLevel } from '../../../drivers/redfish/resources-config.js';
import type { RaidVolume } from '../../../drivers/capabilities-config.js';
import type { VirtualMediaResource } from '../../../drivers/redfish/resources.js';
import { htmlTitle, statusError, transportError } from '../../../drivers/redfish/http-errors.js';

const SCHEMA: Record<string, BiosAttributeSchema> = {
  BootMode: { attributeType: 'Enumeration', allowableValues: ['Uefi', 'LegacyBios'] },
  Cores: { attributeType: 'Integer', lowerBound: 1, upperBound: 28 },
  Tag: { attributeType: 'String', minLength: 0, maxLength: 4 },
  Tpm: { attributeType: 'Boolean' },
  Setup: { attributeType: 'Password' },
  Serial: { attributeType: 'String', readOnly: true },
  AdminPasswordHint: { attributeType: 'String' },
  Loose: { attributeType: '' },
};

const biosCases: Record<string, [string, string, RegExp | undefined]> = {
  'enumeration in list': ['BootMode', 'Uefi', undefined],
  'enumeration not in list': ['BootMode', 'Bios', /not one of Uefi, LegacyBios/],
  'integer in bounds': ['Cores', '28', undefined],
  'integer above bound': ['Cores', '29', /outside 1\.\.28/],
  'integer not a number': ['Cores', '2.5', /not an integer/],
  'string too long': ['Tag', 'abcde', /length 5 is outside 0\.\.4/],
  'string fits': ['Tag', 'ab', undefined],
  'boolean literal': ['Tpm', 'true', undefined],
  'boolean other': ['Tpm', 'yes', /not true or false/],
  'password type': ['Setup', 'x', /password/],
  'read-only first': ['Serial', 'x', /read-only/],
  'name containing Password': ['AdminPasswordHint', 'x', /looks like a password/],
  'empty type accepted': ['Loose', 'anything', undefined],
  'unknown attribute': ['Nope', '1', /unknown BIOS attribute Nope/],
};

for (const [name, [attr, value, problem]] of Object.entries(biosCases)) {
  test(`BIOS value check: ${name}`, () => {
    const got = checkBiosValue(attr, SCHEMA[attr], value);
    if (problem === undefined) assert.equal(got, undefined);
    else assert.match(got ?? '', problem);
  });
}

test('BIOS plan: validates, skips values already current or pending, converts JSON types', () => {
  const current = { BootMode: 'Uefi', Cores: 8, Tag: '', Tpm: false, Loose: 3 };
  const pending = { Cores: 16 };
  const plan = planBiosChanges({ BootMode: 'Uefi', Cores: 16, Tag: 'r1', Tpm: 'true', Loose: '4' }, current, pending, SCHEMA);
  assert.deepEqual(plan.problems, []);
  assert.deepEqual(plan.patch, { Tag: 'r1', Tpm: true, Loose: 4 });
  const bad = planBiosChanges({ BootMode: 'Floppy', Serial: 'x' }, current, {}, SCHEMA);
  assert.equal(bad.problems.length, 2);
  assert.deepEqual(pendingBiosValues({ A: 1, B: 'x' }, { A: '1', B: 'y', C: null }), { B: 'y', C: null });
  assert.equal(encodeBiosValue(undefined, true, 'false'), false);
  assert.equal(encodeBiosValue({ attributeType: 'String' }, 5, '6'), '6');
});

const request = { address: 'redfish://bmc-7', method: 'GET', path: '/redfish/v1/Systems/1' };

const statuses: Record<number, string> = {
  401: BmcErrorCode.auth, 403: BmcErrorCode.auth, 404: BmcErrorCode.protocol, 409: BmcErrorCode.busy, 412: BmcErrorCode.busy,
  429: BmcErrorCode.busy, 500: BmcErrorCode.protocol, 501: BmcErrorCode.protocol, 503: BmcErrorCode.busy, 504: BmcErrorCode.timeout,
};

for (const [status, code] of Object.entries(statuses)) {
  test(`HTTP ${status} → ${code}`, () => {
    const err = statusError(Number(status), request, { error: { code: 'Base.1.0.GeneralError', message: 'boom' } });
    assert.equal(err.code, code);
    assert.equal(err.httpStatus, Number(status));
    assert.match(err.message, new RegExp(`^BMC redfish://bmc-7: GET /redfish/v1/Systems/1 .*HTTP ${status}: boom`));
  });
}

const transports: Record<string, [unknown, string, RegExp]> = {
  'self-signed certificate': [Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), BmcErrorCode.unreachable, /TLS certificate of bmc-7:443 was not accepted.*disableCertificateVerification/],
  'wrong host name': [Object.assign(new Error('altname'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), BmcErrorCode.unreachable, /ERR_TLS_CERT_ALTNAME_INVALID/],
  'refused': [Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), BmcErrorCode.unreachable, /cannot reach bmc-7:443 \(ECONNREFUSED\)/],
  'DNS failure in a cause': [Object.assign(new Error('fetch failed'), { cause: Object.assign(new Error('getaddrinfo'), { code: 'ENOTFOUND' }) }), BmcErrorCode.unreachable, /ENOTFOUND/],
  'AbortSignal.timeout': [Object.assign(new Error('aborted'), { name: 'TimeoutError' }), BmcErrorCode.timeout, /within 2500 ms/],
  'undici headers timeout': [Object.assign(new Error('h'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), BmcErrorCode.timeout, /within 2500 ms/],
  'something else': [new Error('weird'), BmcErrorCode.unreachable, /failed talking to bmc-7:443 \(Error\)/],
};

for (const [name, [cause, code, pattern]] of Object.entries(transports)) {
  test(`transport failure: ${name}`, () => {
    const err = transportError(cause, request, 'bmc-7:443', 2500);
    assert.equal(err.code, code);
    assert.match(err.message, pattern);
    assert.ok(err.message.startsWith('BMC redfish://bmc-7: '));
    assert.equal(err.address, 'redfish://bmc-7');
    if (name === 'self-signed certificate') assert.ok(err instanceof RedfishTlsError && err.tlsCode === 'DEPTH_ZERO_SELF_SIGNED_CERT' && err.host === 'bmc-7:443');
  });
}

test('HTML titles are extracted for messages', () => {
  assert.equal(htmlTitle('<html><head><title>\n 502 Bad   Gateway </title></head>'), '502 Bad Gateway');
  assert.equal(htmlTitle('<html>no title</html>'), undefined);
});

function slot(id: string, mediaTypes: string[]): VirtualMediaResource {
  return { uri: `/vm/${id}`, id, mediaTypes, image: undefined, inserted: false, writeProtected: undefined, insertTarget: undefined, ejectTarget: undefined };
}

test('virtual media: a dedicated CD/DVD slot beats a combined one; USB and floppy found by type', () => {
  const slots = [slot('1', ['Floppy', 'USBStick']), slot('Combo', ['CD', 'USBStick']), slot('2', ['CD', 'DVD'])];
  assert.equal(pickSlot(slots, 'cd')?.id, '2');
  assert.equal(pickSlot(slots, 'usb')?.id, '1');
  assert.equal(pickSlot([slot('1', ['USBStick'])], 'cd'), undefined);
  assert.equal(pickSlot([slot('VirtualCD', [])], 'cd')?.id, 'VirtualCD', 'a slot without MediaTypes named like a CD is used');
  assert.equal(deviceOfSlot(slot('1', ['Floppy', 'USBStick'])), 'usb');
  assert.equal(deviceOfSlot(slot('x', ['NetworkDrive'])), undefined);
});

test('RAID: level ↔ RAIDType and target matching', () => {
  assert.equal(raidTypeOfLevel('1+0'), 'RAID10');
  assert.equal(raidLevelOfType('RAID60'), '6+0');
  assert.equal(raidLevelOfType('RAID1E'), undefined);
  const existing: RaidVolume[] = [
    { id: 'v0', name: 'os', level: '1', sizeBytes: 100, controller: 'c0', physicalDisks: ['d1', 'd0'] },
    { id: 'v1', name: 'data', level: '0', sizeBytes: 50, controller: 'c0', physicalDisks: ['d2'] },
  ];
  assert.equal(raidTargetMatches(existing, [{ level: '0', name: 'data' }, { level: '1', physicalDisks: ['d0', 'd1'] }]), true);
  assert.equal(raidTargetMatches(existing, [{ level: '1' }, { level: '1' }]), false);
  assert.equal(raidTargetMatches(existing, [{ level: '1', name: 'os', sizeBytes: 99 }, { level: '0' }]), false);
  assert.equal(raidTargetMatches([], []), true);
});

test('firmware component names follow metal3 (bmc, bios, nic:<id>)', () => {
  assert.equal(firmwareComponentOf({ id: 'Installed-25227-6.10__iDRAC.Embedded.1-1', name: 'Integrated Dell Remote Access Controller' }), 'bmc');
  assert.equal(firmwareComponentOf({ id: '1', name: 'iLO 5' }), 'bmc');
  assert.equal(firmwareComponentOf({ id: '2', name: 'System ROM' }), 'bios');
  assert.equal(firmwareComponentOf({ id: 'NIC.Slot.1-1', name: 'Intel X710' }), 'nic:NIC.Slot.1-1');
  assert.equal(firmwareComponentOf({ id: 'CPLD', name: 'System CPLD' }), 'CPLD');
});

test('vendor quirks come from the scheme; the vendor name from the service root or Oem', () => {
  assert.equal(quirksForAddress(parseBmcAddress('redfish://h')), GENERIC_QUIRKS);
  assert.equal(quirksForAddress(parseBmcAddress('idrac-virtualmedia://h')), IDRAC_QUIRKS);
  assert.equal(quirksForAddress(parseBmcAddress('ilo5-redfish://h')), ILO_QUIRKS);
  assert.equal(IDRAC_QUIRKS.skipFirmwareId('Previous-25227-6.00__iDRAC.Embedded.1-1'), true);
  assert.equal(ILO_QUIRKS.bootModeSettable, false);
  const root = { redfishVersion: '1.6.0', uuid: undefined, product: undefined, vendor: undefined, oemVendors: ['Hpe'], systems: undefined, managers: undefined, chassis: undefined, sessionService: undefined, sessions: undefined, updateService: undefined, taskService: undefined, eventService: undefined, registries: undefined };
  assert.equal(vendorOf(root, undefined, 'HPE'), 'HPE');
  assert.equal(vendorOf({ ...root, vendor: 'Dell' }, undefined, undefined), 'Dell');
  assert.equal(vendorOf({ ...root, oemVendors: [] }, undefined, 'Supermicro'), 'Supermicro');
});
