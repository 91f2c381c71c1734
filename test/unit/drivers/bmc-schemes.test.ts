// The scheme capability table against docs/metal3-mapping.md, "Scheme table" (main and removed drivers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bmcCapabilities, parseBmcAddress } from '../../../drivers/index.js';
import { BMC_SCHEMES, listBmcSchemes, resolveBmcScheme, type BootPath } from '../../../drivers/bmc-schemes.js';

interface Row {
  driver: string;
  type: string;
  boot: string;
  raid: string;
  firmware: boolean;
  inspect: boolean;
  needsMac: boolean;
  secureBoot: boolean;
  iso: boolean;
  provNet: boolean;
  bios: boolean;
  bootPaths: BootPath[];
  removed?: string;
  transports: string[];
}

// Columns: Driver, Boot, RAID, Firmware, Inspect, NeedsMAC (main), SecureBoot, ISO preprov, Needs prov. net.
const matrix: Record<string, Row> = {
  ipmi: { driver: 'ipmi', type: 'ipmi', boot: 'ipxe', raid: 'no-raid', firmware: false, inspect: false, needsMac: false, secureBoot: false, iso: false, provNet: true, bios: false, bootPaths: ['pxe'], transports: [] },
  libvirt: { driver: 'ipmi', type: 'ipmi', boot: 'ipxe', raid: 'no-raid', firmware: false, inspect: false, needsMac: true, secureBoot: false, iso: false, provNet: true, bios: false, bootPaths: ['pxe'], transports: [] },
  redfish: { driver: 'redfish', type: 'redfish', boot: 'ipxe', raid: 'redfish', firmware: true, inspect: true, needsMac: false, secureBoot: true, iso: false, provNet: true, bios: true, bootPaths: ['pxe'], transports: ['http', 'https'] },
  'ilo5-redfish': { driver: 'redfish', type: 'redfish', boot: 'ipxe', raid: 'redfish', firmware: true, inspect: true, needsMac: false, secureBoot: true, iso: false, provNet: true, bios: true, bootPaths: ['pxe'], transports: ['http', 'https'] },
  'idrac-redfish': { driver: 'idrac', type: 'redfish', boot: 'ipxe', raid: 'idrac-redfish', firmware: true, inspect: true, needsMac: false, secureBoot: true, iso: false, provNet: true, bios: true, bootPaths: ['pxe'], transports: ['http', 'https'] },
  'redfish-virtualmedia': { driver: 'redfish', type: 'redfish', boot: 'redfish-virtual-media', raid: 'redfish', firmware: true, inspect: true, needsMac: false, secureBoot: true, iso: true, provNet: false, bios: true, bootPaths: ['virtual-media'], transports: ['http', 'https'] },
  'ilo5-virtualmedia': { driver: 'redfish', type: 'redfish', boot: 'redfish-virtual-media', raid: 'redfish', firmware: true, inspect: true, needsMac: false, secureBoot: true, iso: true, provNet: false, bios: true, bootPaths: ['virtual-media'], transports: ['http', 'https'] },
  'idrac-virtualmedia': { driver: 'idrac', type: 'redfish', boot: 'idrac-redfish-virtual-media', raid: 'idrac-redfish', firmware: true, inspect: true, needsMac: false, secureBoot: true, iso: true, provNet: false, bios: true, bootPaths: ['virtual-media'], transports: ['http', 'https'] },
  'redfish-uefihttp': { driver: 'redfish', type: 'redfish', boot: 'redfish-https', raid: 'redfish', firmware: true, inspect: true, needsMac: false, secureBoot: true, iso: true, provNet: false, bios: true, bootPaths: ['uefi-http'], transports: ['http', 'https'] },
  ilo4: { driver: 'ilo', type: 'redfish', boot: 'ilo-ipxe', raid: 'no-raid', firmware: false, inspect: false, needsMac: true, secureBoot: true, iso: false, provNet: true, bios: true, bootPaths: ['pxe'], removed: '2025-10', transports: ['https'] },
  'ilo4-virtualmedia': { driver: 'ilo', type: 'redfish', boot: 'ilo-virtual-media', raid: 'no-raid', firmware: false, inspect: false, needsMac: true, secureBoot: true, iso: true, provNet: false, bios: true, bootPaths: ['virtual-media'], removed: '2025-10', transports: ['https'] },
  ilo5: { driver: 'ilo5', type: 'redfish', boot: 'ilo-ipxe', raid: 'ilo5', firmware: false, inspect: false, needsMac: true, secureBoot: true, iso: false, provNet: true, bios: true, bootPaths: ['pxe'], removed: '2025-10', transports: ['https'] },
  irmc: { driver: 'irmc', type: 'ipmi', boot: 'ipxe', raid: 'irmc', firmware: false, inspect: false, needsMac: true, secureBoot: true, iso: false, provNet: true, bios: true, bootPaths: ['pxe'], removed: '2026-02', transports: [] },
  ibmc: { driver: 'ibmc', type: 'redfish', boot: 'ipxe', raid: 'no-raid', firmware: false, inspect: false, needsMac: true, secureBoot: false, iso: false, provNet: true, bios: false, bootPaths: ['pxe'], removed: '2024-03', transports: ['http', 'https'] },
  idrac: { driver: 'idrac', type: 'redfish', boot: 'ipxe', raid: 'idrac-wsman', firmware: false, inspect: false, needsMac: false, secureBoot: false, iso: false, provNet: true, bios: true, bootPaths: ['pxe'], removed: '2024-03', transports: ['http', 'https'] },
  fake: { driver: 'fake', type: 'fake', boot: 'fake', raid: 'fake', firmware: true, inspect: true, needsMac: false, secureBoot: true, iso: true, provNet: false, bios: true, bootPaths: ['pxe', 'virtual-media', 'uefi-http'], transports: [] },
};

test('the table has exactly the schemes of the matrix', () => {
  assert.deepEqual(Object.keys(BMC_SCHEMES).sort(), Object.keys(matrix).sort());
});

for (const [scheme, row] of Object.entries(matrix)) {
  for (const variant of [scheme, ...row.transports.map((t) => `${scheme}+${t}`)]) {
    test(`capabilities: ${variant}`, () => {
      const c = bmcCapabilities(`${variant}://10.0.0.1`);
      assert.deepEqual(
        {
          driver: c.driver, type: c.type, boot: c.interfaces.boot, raid: c.raidInterface, firmware: c.supportsFirmwareUpdate,
          inspect: c.supportsOutOfBandInspection, needsMac: c.needsMac, secureBoot: c.supportsSecureBoot,
          iso: c.supportsIsoPreprovisioningImage, provNet: c.requiresProvisioningNetwork, bios: c.supportsBiosSettings,
          bootPaths: c.bootPaths, removed: c.removedUpstream, scheme: c.scheme,
        },
        {
          driver: row.driver, type: row.type, boot: row.boot, raid: row.raid, firmware: row.firmware,
          inspect: row.inspect, needsMac: row.needsMac, secureBoot: row.secureBoot, iso: row.iso,
          provNet: row.provNet, bios: row.bios, bootPaths: row.bootPaths, removed: row.removed, scheme,
        },
      );
      assert.equal(c.supportsHardwareRaid, row.raid !== 'no-raid');
      assert.deepEqual(c.preprovisioningImageFormats, row.iso ? ['iso', 'initrd'] : ['initrd']);
    });
  }
}

test('listBmcSchemes spells every variant and each one parses', () => {
  const all = listBmcSchemes();
  assert.ok(all.includes('idrac-virtualmedia+https'));
  assert.ok(all.includes('ilo4+https'));
  assert.ok(!all.includes('ilo4+http'), 'BMO registers ilo4 with https only');
  assert.ok(!all.includes('ipmi+https'));
  for (const scheme of all) assert.equal(parseBmcAddress(`${scheme}://h`).scheme, scheme);
});

test('resolveBmcScheme ignores Object.prototype names and double suffixes', () => {
  for (const s of ['constructor', '__proto__', 'toString', 'redfish+http+https', 'redfish+', '+http', '']) {
    assert.equal(resolveBmcScheme(s), undefined, s);
  }
});

test('bmcCapabilities accepts a parsed address and a string alike', () => {
  const parsed = parseBmcAddress('redfish-virtualmedia+https://10.0.0.1/redfish/v1/Systems/1');
  assert.deepEqual(bmcCapabilities(parsed), bmcCapabilities(parsed.raw));
  assert.throws(() => bmcCapabilities('nope://h'), { code: 'RACKSIDE_ERR_BMC_ADDRESS_UNKNOWN_TYPE' });
});
