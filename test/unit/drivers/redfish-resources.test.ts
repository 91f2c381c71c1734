// Redfish resource decoders against recorded-style payloads of a generic BMC (DMTF mockup), an
// iDRAC 9 and an iLO 5 (test/fixtures/redfish/<vendor>/mockup.json), and against odd bodies: only
// BmcError(PROTOCOL) naming the BMC address, the URI and the field may come out.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BmcErrorCode, isBmcError } from '../../../drivers/index.js';
import { decodeAttributeRegistry, decodeBios, decodeDrive, decodeEthernetInterface, decodeMemoryCapacityMib, decodeProcessor, decodeRegistryFile, decodeStorage, decodeVolume } from '../../../drivers/redfish/resources-config.js';
import { decodeCollection, type DecodeContext } from '../../../drivers/redfish/json.js';
import { decodeComputerSystem, decodeManager, decodeSecureBoot, decodeServiceRoot, decodeVirtualMedia } from '../../../drivers/redfish/resources.js';
import { decodeEventDestination, decodeSoftwareInventory, decodeTask, describeRedfishError } from '../../../drivers/redfish/resources-services.js';
import { firmwareComponentOf } from '../../../drivers/redfish/services.js';
import { pickSlot } from '../../../drivers/redfish/media.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../test/fixtures/redfish');
const ADDRESS = 'redfish://bmc.example:443';

function load(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(resolve(FIXTURES, name), 'utf8')) as Record<string, unknown>;
}

function at(uri: string): DecodeContext {
  return { address: ADDRESS, uri };
}

function body(fixture: Record<string, unknown>, uri: string): unknown {
  assert.ok(Object.hasOwn(fixture, uri), `fixture has ${uri}`);
  return fixture[uri];
}

/** Per vendor: the URIs of each resource and what the decoders must read from them. */
const vendors = {
  generic: {
    root: '/redfish/v1', system: '/redfish/v1/Systems/437XR1138R2', manager: '/redfish/v1/Managers/BMC', media: ['/redfish/v1/Managers/BMC/VirtualMedia/CD1'],
    bios: '/redfish/v1/Systems/437XR1138R2/Bios', registryFile: '/redfish/v1/Registries/BiosAttributeRegistryP89.v1_0_0',
    task: '/redfish/v1/TaskService/Tasks/545', firmware: ['/redfish/v1/UpdateService/FirmwareInventory/BMC'], subscription: '/redfish/v1/EventService/Subscriptions/1',
    storage: '/redfish/v1/Systems/437XR1138R2/Storage/1', drive: '/redfish/v1/Systems/437XR1138R2/Storage/1/Drives/3D58ECBC375FD9F2',
    volume: '/redfish/v1/Systems/437XR1138R2/Storage/1/Volumes/1', processor: '/redfish/v1/Systems/437XR1138R2/Processors/CPU1',
    memory: '/redfish/v1/Systems/437XR1138R2/Memory/DIMM1', nic: '/redfish/v1/Systems/437XR1138R2/EthernetInterfaces/12446A3B0411',
    secureBoot: '/redfish/v1/Systems/437XR1138R2/SecureBoot',
    expect: {
      vendor: 'Contoso', redfishVersion: '1.17.0', sessions: '/redfish/v1/SessionService/Sessions', power: 'on', boot: ['Pxe', 'Once', 'UEFI'],
      resetTypes: 9, managedBy: ['/redfish/v1/Managers/BMC'], managerModel: 'Joo Janta 200', managerFirmware: '4.4.6521',
      cd: { inserted: true, image: 'redfish.dmtf.org/freeImages/freeOS.1.1.iso' }, registry: 'BiosAttributeRegistryP89.v1_0_0',
      settingsObject: '/redfish/v1/Systems/437XR1138R2/Bios/Settings', applyTimes: ['OnReset', 'InMaintenanceWindowOnReset'],
      registryUri: '/redfish/v1/Registries/BiosAttributeRegistryP89.v1_0_0/BiosAttributeRegistryP89.v1_0_0.json',
      task: ['completed', 100], components: ['bmc'], subscription: ['1', 'http://www.dnsname.com/Destination1', 'WebUser3'],
      raidTypes: ['RAID0', 'RAID1'], drive: ['HDD', 'SAS', 899527000000], volume: ['1', 2], cpu: ['x86_64', 8, 16, 3700], memoryMib: 32768,
      mac: '12:44:6a:3b:04:11', linkUp: true, secureBoot: [false, 'disabled'],
    },
  },
  idrac: {
    root: '/redfish/v1', system: '/redfish/v1/Systems/System.Embedded.1', manager: '/redfish/v1/Managers/iDRAC.Embedded.1',
    media: ['/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/RemovableDisk', '/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/CD'],
    bios: '/redfish/v1/Systems/System.Embedded.1/Bios', registryFile: '/redfish/v1/Registries/BiosAttributeRegistry',
    task: '/redfish/v1/Managers/iDRAC.Embedded.1/Jobs/JID_812345678901',
    firmware: ['/redfish/v1/UpdateService/FirmwareInventory/Installed-25227-6.10.30.00__iDRAC.Embedded.1-1', '/redfish/v1/UpdateService/FirmwareInventory/Current-159-1.8.2__BIOS.Setup.1-1', '/redfish/v1/UpdateService/FirmwareInventory/Installed-0-22.31.6__NIC.Integrated.1-1-1'],
    subscription: undefined, storage: '/redfish/v1/Systems/System.Embedded.1/Storage/RAID.Integrated.1-1',
    drive: '/redfish/v1/Systems/System.Embedded.1/Storage/RAID.Integrated.1-1/Drives/Disk.Bay.0:Enclosure.Internal.0-1:RAID.Integrated.1-1',
    volume: '/redfish/v1/Systems/System.Embedded.1/Storage/RAID.Integrated.1-1/Volumes/Disk.Virtual.0:RAID.Integrated.1-1',
    processor: '/redfish/v1/Systems/System.Embedded.1/Processors/CPU.Socket.1', memory: '/redfish/v1/Systems/System.Embedded.1/Memory/DIMM.Socket.A1',
    nic: '/redfish/v1/Systems/System.Embedded.1/EthernetInterfaces/NIC.Integrated.1-1-1', secureBoot: '/redfish/v1/Systems/System.Embedded.1/SecureBoot',
    expect: {
      vendor: 'Dell', redfishVersion: '1.11.0', sessions: '/redfish/v1/SessionService/Sessions', power: 'off', boot: ['None', 'Disabled', 'UEFI'],
      resetTypes: 8, managedBy: ['/redfish/v1/Managers/iDRAC.Embedded.1'], managerModel: '15G Monolithic', managerFirmware: '6.10.30.00',
      cd: { inserted: false, image: undefined }, registry: 'BiosAttributeRegistry.v1_0_0',
      settingsObject: '/redfish/v1/Systems/System.Embedded.1/Bios/Settings', applyTimes: ['OnReset', 'AtMaintenanceWindowStart', 'InMaintenanceWindowOnReset'],
      registryUri: '/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry', task: ['pending', 0], components: ['bmc', 'bios', 'nic:Installed-0-22.31.6__NIC.Integrated.1-1-1'],
      subscription: undefined, raidTypes: ['RAID0', 'RAID1', 'RAID5', 'RAID6', 'RAID10', 'RAID50', 'RAID60'], drive: ['SSD', 'SAS', 479559942144],
      volume: ['1', 2], cpu: ['x86_64', 28, 56, 4000], memoryMib: 32768, mac: '2c:ea:7f:aa:bb:01', linkUp: true, secureBoot: [true, 'enabled'],
    },
  },
  ilo5: {
    root: '/redfish/v1/', system: '/redfish/v1/Systems/1/', manager: '/redfish/v1/Managers/1/', media: ['/redfish/v1/Managers/1/VirtualMedia/1/', '/redfish/v1/Managers/1/VirtualMedia/2/'],
    bios: '/redfish/v1/systems/1/bios/', registryFile: '/redfish/v1/Registries/BiosAttributeRegistryU32.v1_2_68/', task: '/redfish/v1/TaskService/Tasks/22/',
    firmware: ['/redfish/v1/UpdateService/FirmwareInventory/1/', '/redfish/v1/UpdateService/FirmwareInventory/2/', '/redfish/v1/UpdateService/FirmwareInventory/7/'],
    subscription: '/redfish/v1/EventService/Subscriptions/3/', storage: undefined, drive: undefined, volume: undefined,
    processor: '/redfish/v1/Systems/1/Processors/1/', memory: '/redfish/v1/Systems/1/Memory/proc1dimm1/', nic: '/redfish/v1/Systems/1/EthernetInterfaces/1/',
    secureBoot: '/redfish/v1/Systems/1/SecureBoot/',
    expect: {
      vendor: undefined, redfishVersion: '1.6.0', sessions: '/redfish/v1/SessionService/Sessions/', power: 'on', boot: ['None', 'Disabled', 'UEFI'],
      resetTypes: 7, managedBy: ['/redfish/v1/Managers/1/'], managerModel: 'iLO 5', managerFirmware: 'iLO 5 v2.72',
      cd: { inserted: true, image: 'http://10.0.0.1:8080/images/host-17.iso' }, registry: 'BiosAttributeRegistryU32.v1_2_68',
      settingsObject: '/redfish/v1/systems/1/bios/settings/', applyTimes: undefined,
      registryUri: '/redfish/v1/registrystore/attributeregistries/en/BiosAttributeRegistryU32.v1_2_68/', task: ['running', 35],
      components: ['bmc', 'bios', 'nic:7'], subscription: ['3', 'https://10.0.0.1:9443/events/host-17', 'rackside/host-17'],
      raidTypes: undefined, drive: undefined, volume: undefined, cpu: ['x86_64', 12, 24, 4000], memoryMib: 32768, mac: '94:40:c9:1a:2b:3c', linkUp: undefined,
      secureBoot: [false, 'disabled'],
    },
  },
} as const;

for (const [vendor, v] of Object.entries(vendors)) {
  const fx = load(`${vendor}/mockup.json`);
  const e = v.expect;

  test(`${vendor}: service root`, () => {
    const root = decodeServiceRoot(body(fx, v.root), at(v.root));
    assert.equal(root.vendor, e.vendor);
    assert.equal(root.redfishVersion, e.redfishVersion);
    assert.equal(root.sessions, e.sessions);
    assert.ok(root.systems !== undefined && root.managers !== undefined && root.updateService !== undefined && root.taskService !== undefined);
    assert.ok(root.eventService !== undefined && root.registries !== undefined);
  });

  test(`${vendor}: systems collection and ComputerSystem`, () => {
    const systemsUri = decodeServiceRoot(body(fx, v.root), at(v.root)).systems ?? '';
    assert.deepEqual(decodeCollection(body(fx, systemsUri), at(systemsUri)), [v.system]);
    const s = decodeComputerSystem(body(fx, v.system), at(v.system));
    assert.equal(s.powerState, e.power);
    assert.deepEqual([s.boot.target, s.boot.enabled, s.boot.mode], e.boot);
    assert.ok(s.boot.allowedTargets?.includes('Pxe') === true && s.boot.allowedTargets.includes('UefiHttp'));
    assert.equal(s.reset?.allowableValues?.length, e.resetTypes);
    assert.ok(s.reset.allowableValues.includes('ForceOff') && s.reset.allowableValues.includes('GracefulShutdown'));
    assert.deepEqual(s.links.managedBy, e.managedBy);
    assert.ok(s.links.bios !== undefined && s.links.secureBoot !== undefined && s.links.processors !== undefined);
    assert.ok(s.serialNumber !== undefined && s.uuid !== undefined && (s.memoryGib ?? 0) > 0);
  });

  test(`${vendor}: Manager and VirtualMedia (CD/DVD slot chosen)`, () => {
    const m = decodeManager(body(fx, v.manager), at(v.manager));
    assert.equal(m.model, e.managerModel);
    assert.equal(m.firmwareVersion, e.managerFirmware);
    assert.ok(m.virtualMedia !== undefined);
    const slots = v.media.map((uri) => decodeVirtualMedia(body(fx, uri), at(uri)));
    const cd = pickSlot(slots, 'cd');
    assert.ok(cd !== undefined && cd.mediaTypes.includes('CD'));
    assert.deepEqual({ inserted: cd.inserted, image: cd.image }, e.cd);
    assert.ok(cd.insertTarget?.includes('InsertMedia') === true && cd.ejectTarget?.includes('EjectMedia') === true);
  });

  test(`${vendor}: Bios, registry file and AttributeRegistry → SettingSchema`, () => {
    const b = decodeBios(body(fx, v.bios), at(v.bios));
    assert.equal(b.attributeRegistry, e.registry);
    assert.equal(b.settingsObject, e.settingsObject);
    assert.deepEqual(b.supportedApplyTimes, e.applyTimes);
    assert.equal(b.attributes.BootMode, 'Uefi');
    const file = decodeRegistryFile(body(fx, v.registryFile), at(v.registryFile));
    assert.equal(file.registry, e.registry);
    assert.equal(file.locations[0]?.uri, e.registryUri);
    const schema = decodeAttributeRegistry(body(fx, e.registryUri), at(e.registryUri));
    const enumeration = Object.values(schema).find((s) => s.attributeType === 'Enumeration' && s.readOnly !== true);
    assert.ok(enumeration !== undefined && (enumeration.allowableValues?.length ?? 0) >= 2);
    assert.ok(Object.values(schema).some((s) => s.readOnly === true));
  });

  test(`${vendor}: task or job, firmware inventory, event destination`, () => {
    const t = decodeTask(body(fx, v.task), at(v.task));
    assert.deepEqual([t.state, t.percentComplete], e.task);
    assert.ok(t.messages.length >= 1);
    assert.deepEqual(v.firmware.map((uri) => firmwareComponentOf(decodeSoftwareInventory(body(fx, uri), at(uri)))), e.components);
    if (v.subscription !== undefined) {
      const s = decodeEventDestination(body(fx, v.subscription), at(v.subscription));
      assert.deepEqual([s.id, s.destination, s.context], e.subscription);
    }
  });

  test(`${vendor}: storage, drive, volume, processor, memory, NIC, Secure Boot`, () => {
    const { storage, drive, volume } = v as { readonly storage?: string; readonly drive?: string; readonly volume?: string };
    if (storage !== undefined && drive !== undefined && volume !== undefined) {
      assert.deepEqual(decodeStorage(body(fx, storage), at(storage)).supportedRaidTypes, e.raidTypes);
      const d = decodeDrive(body(fx, drive), at(drive));
      assert.deepEqual([d.mediaType, d.protocol, d.capacityBytes], e.drive);
      const vol = decodeVolume(body(fx, volume), at(volume));
      assert.deepEqual([vol.level, vol.drives.length], e.volume);
    }
    const p = decodeProcessor(body(fx, v.processor), at(v.processor));
    assert.deepEqual([p.architecture, p.cores, p.threads, p.maxSpeedMhz], e.cpu);
    assert.equal(decodeMemoryCapacityMib(body(fx, v.memory), at(v.memory)), e.memoryMib);
    const nic = decodeEthernetInterface(body(fx, v.nic), at(v.nic));
    assert.equal(nic.macAddress, e.mac);
    assert.equal(nic.linkUp, e.linkUp);
    const sb = decodeSecureBoot(body(fx, v.secureBoot), at(v.secureBoot));
    assert.deepEqual([sb.enabled, sb.currentBoot], e.secureBoot);
  });
}

test('absent processors and DIMMs are recognised', () => {
  const fx = load('generic/mockup.json');
  const cpu2 = '/redfish/v1/Systems/437XR1138R2/Processors/CPU2';
  assert.equal(decodeProcessor(body(fx, cpu2), at(cpu2)).present, false);
  const dimm4 = '/redfish/v1/Systems/437XR1138R2/Memory/DIMM4';
  assert.equal(decodeMemoryCapacityMib(body(fx, dimm4), at(dimm4)), undefined);
  const ilo = load('ilo5/mockup.json');
  assert.equal(decodeMemoryCapacityMib(body(ilo, '/redfish/v1/Systems/1/Memory/proc1dimm2/'), at('/x')), undefined);
});

test('AttributeRegistry types, bounds and lengths map to metal3 SettingSchema', () => {
  const fx = load('generic/mockup.json');
  const uri = '/redfish/v1/Registries/BiosAttributeRegistryP89.v1_0_0/BiosAttributeRegistryP89.v1_0_0.json';
  const schema = decodeAttributeRegistry(body(fx, uri), at(uri));
  assert.deepEqual(schema.BootMode, { attributeType: 'Enumeration', allowableValues: ['LegacyBios', 'Uefi'], readOnly: false });
  assert.deepEqual(schema.ProcCoreDisable, { attributeType: 'Integer', lowerBound: 0, upperBound: 28, readOnly: false });
  assert.deepEqual(schema.AdminPhone, { attributeType: 'String', minLength: 0, maxLength: 20, readOnly: false });
  assert.deepEqual(schema.TpmEnabled, { attributeType: 'Boolean', readOnly: false });
  assert.deepEqual(schema.SetupPassword, { attributeType: 'Password', minLength: 8, maxLength: 32, readOnly: false });
  assert.deepEqual(schema.SerialNumberOverride, { attributeType: '', readOnly: false }, 'an unknown Type maps to the empty type');
  assert.equal(schema.SecureBootStatus?.readOnly, true);
  const ilo = load('ilo5/mockup.json');
  const iloUri = '/redfish/v1/registrystore/attributeregistries/en/BiosAttributeRegistryU32.v1_2_68/';
  assert.equal(decodeAttributeRegistry(body(ilo, iloUri), at(iloUri)).SerialNumber?.unique, true, 'iLO IsSystemUniqueProperty → unique');
});

test('odd fields are tolerated: wrong types read as absent, links without ids are skipped', () => {
  const odd = load('odd.json');
  const s = decodeComputerSystem(odd['system-with-odd-fields'], at('/redfish/v1/Systems/1'));
  assert.equal(s.id, '1');
  assert.equal(s.manufacturer, undefined);
  assert.equal(s.powerState, 'unknown');
  assert.equal(s.memoryGib, 64);
  assert.equal(s.boot.enabled, undefined);
  assert.equal(s.boot.allowedTargets, undefined);
  assert.deepEqual(s.links.managedBy, ['/redfish/v1/Managers/1']);
  assert.equal(s.links.bios, undefined);
  assert.equal(s.reset, undefined);
  const empty = decodeComputerSystem(odd['system-without-anything'], at('/redfish/v1/Systems/Blade.7'));
  assert.equal(empty.id, 'Blade.7');
  assert.equal(empty.uri, '/redfish/v1/Systems/Blade.7');
  assert.equal(empty.powerState, 'unknown');
  const bios = decodeBios(odd['bios-with-nested-values'], at('/b'));
  assert.deepEqual(bios.attributes, { BootMode: 'Uefi', Count: 4, Flag: false, Unset: null });
  const vm = decodeVirtualMedia(odd['virtual-media-without-inserted'], at('/vm'));
  assert.equal(vm.inserted, true, 'an Image without Inserted counts as inserted');
  assert.equal(describeRedfishError(odd['error-body']), 'The value Floppy for the property BootSourceOverrideTarget is not in the list of acceptable values.; IDRAC.2.8.SYS403');
  assert.equal(describeRedfishError(odd['error-body-message-only']), 'See @Message.ExtendedInfo for more information.');
  assert.equal(describeRedfishError('<html>'), undefined);
});

const refusals: Record<string, { decode: () => unknown; field: RegExp }> = {
  'collection without Members': { decode: () => decodeCollection(load('odd.json')['collection-without-members'], at('/redfish/v1/Systems')), field: /"Members"/ },
  'collection member without @odata.id': { decode: () => decodeCollection(load('odd.json')['collection-with-bad-member'], at('/redfish/v1/Systems')), field: /Members\[1\]/ },
  'Bios Attributes as an array': { decode: () => decodeBios(load('odd.json')['bios-with-array-attributes'], at('/redfish/v1/Systems')), field: /"Attributes"/ },
  'registry without Attributes': { decode: () => decodeAttributeRegistry(load('odd.json')['registry-without-entries'], at('/redfish/v1/Systems')), field: /RegistryEntries\.Attributes/ },
  'task without TaskState': { decode: () => decodeTask(load('odd.json')['task-without-state'], at('/redfish/v1/Systems')), field: /TaskState/ },
  'array body': { decode: () => decodeComputerSystem([], at('/redfish/v1/Systems')), field: /body is an array/ },
  'null body': { decode: () => decodeServiceRoot(null, at('/redfish/v1/Systems')), field: /body is null/ },
  'string body': { decode: () => decodeManager('<html>', at('/redfish/v1/Systems')), field: /body is string/ },
};

for (const [name, c] of Object.entries(refusals)) {
  test(`refused with BmcError(PROTOCOL) naming address, URI and field: ${name}`, () => {
    assert.throws(c.decode, (err: unknown) => {
      assert.ok(isBmcError(err, BmcErrorCode.protocol));
      assert.ok(err.message.includes(ADDRESS) && err.message.includes('/redfish/v1/Systems'), err.message);
      assert.match(err.message, c.field);
      return true;
    });
  });
}
