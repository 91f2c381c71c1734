/** The ramdisk inventory → HardwareDetails mapping (docs/metal3-mapping.md, "Inventory"). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hardwareDetailsFromInventory, InventoryError } from '../../../agent/provisioner/local/inventory.js';

/** What images/ramdisk/rackside-agent.sh prints in a QEMU guest (two disks, one NIC). */
const QEMU_INVENTORY = {
  cpu: { model_name: 'QEMU Virtual CPU version 2.5+', count: 2, architecture: 'x86_64', frequency: '2799.998', flags: ['sse2', 'fpu', 'apic'] },
  memory: { total: 520093696, physical_mb: 512 },
  disks: [
    { name: '/dev/vda', size: 67108864, rotational: false, model: null, vendor: '0x1af4', serial: 'RSDISK0', wwn: null, hctl: null, by_path: null },
    { name: '/dev/sda', size: 134217728, rotational: true, model: 'QEMU HARDDISK', vendor: 'ATA', serial: 'RSDISK1', wwn: null, hctl: '0:0:0:0', by_path: '/dev/disk/by-path/pci-0000:00:1f.2-ata-1' },
    { name: '/dev/nvme0n1', size: 1000204886016, rotational: false, model: 'Samsung SSD 980', serial: 'S64', wwn: 'eui.0025', hctl: null },
  ],
  interfaces: [
    { name: 'eth0', mac_address: '52:54:00:AA:BB:01', ipv4_address: '10.0.2.15', has_carrier: true, speed_mbps: 25000, driver: 'virtio_net', vendor: '0x1af4', product: '0x1000', pci_address: '0000:00:03.0', pxe_enabled: true },
    { name: 'eth1', mac_address: '52:54:00:aa:bb:02', ipv4_address: null, ipv6_address: 'fd00::2', speed_mbps: null, vendor: '', product: '', pxe_enabled: false },
  ],
  system_vendor: { manufacturer: 'QEMU', product_name: 'Standard PC (i440FX + PIIX, 1996)', serial_number: '', firmware: { vendor: 'SeaBIOS', version: '1.16.2-debian-1.16.2-1', build_date: '04/01/2014' } },
  boot: { current_boot_mode: 'bios', pxe_interface: '52:54:00:aa:bb:01' },
  hostname: 'localhost',
};

test('maps a QEMU guest inventory like upstream', () => {
  const details = hardwareDetailsFromInventory(QEMU_INVENTORY);
  assert.deepEqual(details.cpu, { arch: 'x86_64', model: 'QEMU Virtual CPU version 2.5+', clockMegahertz: 2800, flags: ['apic', 'fpu', 'sse2'], count: 2 });
  assert.equal(details.ramMebibytes, 512);
  assert.deepEqual(details.systemVendor, { manufacturer: 'QEMU', productName: 'Standard PC (i440FX + PIIX, 1996)' });
  assert.deepEqual(details.firmware.bios, { vendor: 'SeaBIOS', version: '1.16.2-debian-1.16.2-1', date: '04/01/2014' });
  assert.deepEqual(details.storage?.map((s) => [s.name, s.type, s.sizeBytes, s.serialNumber]), [
    ['/dev/vda', 'SSD', 67108864, 'RSDISK0'],
    ['/dev/disk/by-path/pci-0000:00:1f.2-ata-1', 'HDD', 134217728, 'RSDISK1'],
    ['/dev/nvme0n1', 'NVME', 1000204886016, 'S64'],
  ]);
  assert.deepEqual(details.storage[1]!.alternateNames, ['/dev/sda', '/dev/disk/by-path/pci-0000:00:1f.2-ata-1']);
  assert.deepEqual(details.nics, [
    { name: 'eth0', model: '0x1af4 0x1000', mac: '52:54:00:aa:bb:01', speedGbps: 25, pciAddress: '0000:00:03.0', pxe: true, ip: '10.0.2.15' },
    { name: 'eth1', mac: '52:54:00:aa:bb:02', pxe: false, ip: 'fd00::2' },
  ]);
  assert.equal(details.hostname, 'localhost');
});

test('a dual-stack NIC gives two entries, v4 first', () => {
  const details = hardwareDetailsFromInventory({ ...QEMU_INVENTORY, interfaces: [{ name: 'eno1', mac_address: 'aa:bb:cc:dd:ee:ff', ipv4_address: '192.0.2.5', ipv6_address: '2001:db8::5' }] });
  assert.deepEqual(details.nics?.map((n) => n.ip), ['192.0.2.5', '2001:db8::5']);
});

test('hostile or broken input is dropped field by field, never thrown past InventoryError', () => {
  assert.throws(() => hardwareDetailsFromInventory('nope'), InventoryError);
  assert.throws(() => hardwareDetailsFromInventory({ disks: [] }), InventoryError);
  const details = hardwareDetailsFromInventory({
    cpu: { count: -3, frequency: 'fast', flags: [1, 'x'.repeat(100), 'ok'] },
    memory: { physical_mb: '2048' },
    disks: [null, 7, { name: 42 }, { name: '/dev/sdb', size: 'big', rotational: 'yes' }],
    interfaces: { not: 'a list' },
    system_vendor: { manufacturer: '<script>'.repeat(100) },
  });
  assert.deepEqual(details.cpu, { flags: ['ok'] });
  assert.equal(details.ramMebibytes, 2048);
  assert.deepEqual(details.storage, [{ name: '/dev/sdb', alternateNames: ['/dev/sdb'], rotational: false, type: 'SSD' }]);
  assert.deepEqual(details.nics, []);
  assert.equal(details.systemVendor.manufacturer?.length, 256);
});
