/**
 * The EDK2 variable-store codec (test/lab/firmware/edk2-varstore.ts), the load options and device
 * paths (efi-load-option.ts) and the settings the lab's BMC writes (ovmf-settings.ts): against
 * Debian's OVMF variable files and a small store built here.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import {
  decodeGuid, EFI_GLOBAL_VARIABLE, encodeGuid, findVariable, liveVariables, parseVarStore, SECURE_BOOT_ENABLE_GUID, setVariable, VarStoreError,
} from '../../lab/firmware/edk2-varstore.js';
import { bootOptionName, encodeLoadOption, httpBootDevicePath, LOAD_OPTION_ACTIVE } from '../../lab/firmware/efi-load-option.js';
import { BMC_BOOT_OPTION, secureBootAtNextStart, withHttpBootNext, withoutHttpBootNext, withSecureBootEnable } from '../../lab/firmware/ovmf-settings.js';
import { skipOrFail } from '../../helpers/integration.js';

const PLAIN = '/usr/share/OVMF/OVMF_VARS_4M.fd';
const MS = '/usr/share/OVMF/OVMF_VARS_4M.ms.fd';

function ovmf(t: TestContext, path: string): Uint8Array | undefined {
  if (existsSync(path)) return new Uint8Array(readFileSync(path));
  skipOrFail(t, `${path} missing (Debian package ovmf; scripts/install-test-deps.sh)`);
  return undefined;
}

/** A firmware volume of `storeBytes` of variable store: FV header (72 bytes, checksummed) + store header. */
function tinyStore(storeBytes: number): Uint8Array {
  const fd = new Uint8Array(72 + storeBytes).fill(0xff);
  const v = new DataView(fd.buffer);
  fd.fill(0, 0, 72);
  v.setBigUint64(32, BigInt(fd.length), true);
  fd.set([0x5f, 0x46, 0x56, 0x48], 40); // _FVH
  v.setUint16(48, 72, true);
  v.setUint32(56, 1, true);
  v.setUint32(60, fd.length, true);
  let sum = 0;
  for (let i = 0; i < 72; i += 2) sum = (sum + v.getUint16(i, true)) & 0xffff;
  v.setUint16(50, (0x10000 - sum) & 0xffff, true);
  fd.set(encodeGuid('aaf32c78-947b-439a-a180-2e144ec37792'), 72);
  v.setUint32(72 + 16, storeBytes, true);
  fd[72 + 20] = 0x5a;
  fd[72 + 21] = 0xfe;
  fd.fill(0, 72 + 22, 72 + 28);
  return fd;
}

/** gEfiCustomModeEnableGuid (edk2 AuthenticatedVariableFormat.h). */
const CUSTOM_MODE_GUID = 'c076ec0c-7028-4399-a072-71ee5c448b9f';
const nic = { pciDevice: 3, pciFunction: 0, mac: '52:54:00:12:34:56' };

test('GUIDs: the first three fields little-endian, the rest in order', () => {
  const bytes = encodeGuid(EFI_GLOBAL_VARIABLE);
  assert.deepEqual([...bytes], [0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c]);
  assert.equal(decodeGuid(bytes), EFI_GLOBAL_VARIABLE);
  assert.throws(() => encodeGuid('nope'), VarStoreError);
});

test("Debian's OVMF_VARS_4M.fd: a valid, empty authenticated store", (t) => {
  const fd = ovmf(t, PLAIN);
  if (fd === undefined) return;
  const store = parseVarStore(fd);
  assert.equal(store.storeOffset, 72);
  assert.equal(store.records.length, 0);
  assert.equal(store.freeOffset, 72 + 28);
  assert.equal(store.storeEnd, 0x40000); // the store fills the first 256 KiB; the FTW areas follow
  assert.equal(secureBootAtNextStart(fd), false);
});

test("Debian's OVMF_VARS_4M.ms.fd: Microsoft keys enrolled, Secure Boot enabled, old copies deleted", (t) => {
  const fd = ovmf(t, MS);
  if (fd === undefined) return;
  const live = liveVariables(fd);
  for (const name of ['PK', 'KEK', 'db', 'dbx']) assert.ok(live.some((v) => v.name === name), `${name} enrolled`);
  const enable = findVariable(fd, 'SecureBootEnable', SECURE_BOOT_ENABLE_GUID);
  assert.deepEqual([...(enable?.data ?? [])], [1]);
  assert.equal(enable?.attributes, 0x3);
  assert.equal(live.find((v) => v.name === 'PK')?.attributes, 0x27, 'PK: NV+BS+RT+time-based authenticated');
  // CustomMode was written three times; only the last copy (0 = standard mode) is live.
  const custom = parseVarStore(fd).records.filter((v) => v.name === 'CustomMode');
  assert.equal(custom.length, 3);
  assert.deepEqual(custom.map((v) => v.live), [false, false, true]);
  assert.deepEqual([...(findVariable(fd, 'CustomMode', CUSTOM_MODE_GUID)?.data ?? [])], [0]);
  assert.equal(secureBootAtNextStart(fd), true);
});

test('Secure Boot off and on again: a new SecureBootEnable copy each time, the old one deleted, the keys kept', (t) => {
  const fd = ovmf(t, MS);
  if (fd === undefined) return;
  const off = withSecureBootEnable(fd, false);
  assert.equal(secureBootAtNextStart(off), false);
  assert.equal(off.length, fd.length);
  const copies = parseVarStore(off).records.filter((v) => v.name === 'SecureBootEnable');
  assert.deepEqual(copies.map((v) => [v.live, v.state, [...v.data]]), [[false, 0x3d, [1]], [true, 0x3f, [0]]]);
  const on = withSecureBootEnable(off, true);
  assert.equal(secureBootAtNextStart(on), true);
  assert.equal(liveVariables(on).length, liveVariables(fd).length);
  // Nothing but the store changed: the FTW areas after it are byte-identical.
  assert.deepEqual(on.subarray(0x40000), fd.subarray(0x40000));
  assert.deepEqual(on.subarray(0, 72), fd.subarray(0, 72));
});

test('round trip: a written variable reads back with its name, GUID, attributes and data, 4-byte aligned', () => {
  let fd = tinyStore(1024);
  fd = setVariable(fd, { name: 'Abc', guid: EFI_GLOBAL_VARIABLE, attributes: 7, data: Uint8Array.of(1, 2, 3) });
  fd = setVariable(fd, { name: 'Next', guid: SECURE_BOOT_ENABLE_GUID, attributes: 3, data: Uint8Array.of(9) });
  const store = parseVarStore(fd);
  assert.deepEqual(store.records.map((v) => [v.name, v.guid, v.attributes, [...v.data], v.offset]), [
    ['Abc', EFI_GLOBAL_VARIABLE, 7, [1, 2, 3], 100],
    // 100 + 60 header + 8 name + 3 data = 171 → 172
    ['Next', SECURE_BOOT_ENABLE_GUID, 3, [9], 172],
  ]);
  assert.equal(store.freeOffset, 172 + 60 + 10 + 1 + 1);
  // The header bytes the variable driver reads: StartId, State VAR_ADDED, NameSize, DataSize.
  assert.deepEqual([...fd.subarray(100, 104)], [0xaa, 0x55, 0x3f, 0x00]);
  assert.deepEqual([...fd.subarray(136, 144)], [8, 0, 0, 0, 3, 0, 0, 0]);
});

test('replace marks the old copy deleted; empty data deletes without appending', () => {
  let fd = setVariable(tinyStore(1024), { name: 'X', guid: EFI_GLOBAL_VARIABLE, attributes: 7, data: Uint8Array.of(1) });
  fd = setVariable(fd, { name: 'X', guid: EFI_GLOBAL_VARIABLE, attributes: 7, data: Uint8Array.of(2) });
  assert.deepEqual([...(findVariable(fd, 'X', EFI_GLOBAL_VARIABLE)?.data ?? [])], [2]);
  const free = parseVarStore(fd).freeOffset;
  fd = setVariable(fd, { name: 'X', guid: EFI_GLOBAL_VARIABLE, attributes: 7, data: new Uint8Array(0) });
  assert.equal(findVariable(fd, 'X', EFI_GLOBAL_VARIABLE), undefined);
  assert.equal(parseVarStore(fd).freeOffset, free);
  assert.equal(parseVarStore(fd).records.length, 2);
});

test('a full store, an authenticated variable and a foreign file are errors', () => {
  const small = tinyStore(28 + 80);
  assert.throws(() => setVariable(small, { name: 'Big', guid: EFI_GLOBAL_VARIABLE, attributes: 7, data: new Uint8Array(64) }), /store is full: Big needs 132 bytes, 80 are free/);
  assert.throws(() => setVariable(tinyStore(512), { name: 'db', guid: EFI_GLOBAL_VARIABLE, attributes: 0x27, data: Uint8Array.of(1) }), /authenticated/);
  assert.throws(() => parseVarStore(new Uint8Array(4096)), /_FVH/);
  const bad = tinyStore(512);
  bad[60] = (bad[60] ?? 0) ^ 1;
  assert.throws(() => parseVarStore(bad), /checksum/);
});

test('device path of an HTTP boot: PciRoot(0)/Pci(3,0)/MAC/IPv4(DHCP)/Uri/End, golden bytes', () => {
  const path = httpBootDevicePath(nic, 'http://a/b.iso');
  const hex = Buffer.from(path).toString('hex');
  assert.equal(hex.slice(0, 24), '02010c00d041030a00000000'); // ACPI PciRoot: HID PNP0A03, UID 0
  assert.equal(hex.slice(24, 36), '010106000003'); // Pci: function 0, device 3
  assert.equal(hex.slice(36, 46), '030b250052'); // MAC node, 37 bytes, 52:…
  assert.equal(path[12 + 6 + 36], 1, 'IfType Ethernet');
  const ipAt = 12 + 6 + 37;
  assert.deepEqual([...path.subarray(ipAt, ipAt + 4)], [0x03, 0x0c, 27, 0]);
  assert.ok(path.subarray(ipAt + 4, ipAt + 27).every((b) => b === 0), 'IPv4 all zero: DHCP');
  const uriAt = ipAt + 27;
  assert.deepEqual([...path.subarray(uriAt, uriAt + 4)], [0x03, 0x18, 4 + 14, 0]);
  assert.equal(Buffer.from(path.subarray(uriAt + 4, uriAt + 18)).toString('latin1'), 'http://a/b.iso');
  assert.deepEqual([...path.subarray(uriAt + 18)], [0x7f, 0xff, 4, 0]);
});

test('load option: Attributes, FilePathListLength, UTF-16 description, path', () => {
  const path = Uint8Array.of(0x7f, 0xff, 4, 0);
  const opt = encodeLoadOption('Hi', path);
  assert.deepEqual([...opt], [LOAD_OPTION_ACTIVE, 0, 0, 0, 4, 0, 0x48, 0, 0x69, 0, 0, 0, 0x7f, 0xff, 4, 0]);
  assert.equal(bootOptionName(0xf00), 'Boot0F00');
});

test('HTTP boot next: Boot0F00 and BootNext written, removed again by a boot without a URI', (t) => {
  const fd = ovmf(t, PLAIN);
  if (fd === undefined) return;
  const next = withHttpBootNext(fd, nic, 'http://10.0.0.1/x.iso');
  assert.deepEqual([...(findVariable(next, 'BootNext', EFI_GLOBAL_VARIABLE)?.data ?? [])], [0x00, 0x0f]);
  const option = findVariable(next, bootOptionName(BMC_BOOT_OPTION), EFI_GLOBAL_VARIABLE);
  assert.ok(option !== undefined, 'Boot0F00 written');
  assert.equal(option.attributes, 7);
  assert.ok(Buffer.from(option.data).includes(Buffer.from('http://10.0.0.1/x.iso')));
  const again = withHttpBootNext(next, nic, 'http://10.0.0.1/y.iso');
  assert.equal(liveVariables(again).length, 2);
  const cleared = withoutHttpBootNext(again);
  assert.equal(liveVariables(cleared).length, 0);
  assert.equal(withoutHttpBootNext(fd), fd, 'nothing to remove: the same bytes');
});
