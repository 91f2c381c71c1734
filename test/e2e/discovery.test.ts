// Acceptance of discovery with in-band BMC enlistment (docs/discovery.md) on the virtual rack
// (test/lab/virtual-rack.ts), with real parts only: the real agent with `dhcp.unknownHosts:
// discover` and `discovery.enrollBMC: true`, one QEMU guest under TCG (SeaBIOS + iPXE ROM) whose
// MAC rackside has never seen, and OpenIPMI's ipmi_sim as its BMC. The guest's KCS system
// interface (QEMU ipmi-bmc-extern + isa-ipmi-kcs) is connected to that ipmi_sim (lan.conf
// `serial kcs … codec VM`), which also answers lanplus on 127.0.0.1:623 in the rack's namespace.
// Like a site's BMC, it has a LAN address (set first, as its admin) and a factory admin user,
// which is disabled once the guest is powered on: from then on only a user the guest makes
// itself can drive the BMC. The guest PXE-boots, gets the discovery ramdisk, makes the rackside
// user over /dev/ipmi0 and reports; rackside records it and takes it through registering
// (lanplus with that user), inspecting (powered on by rackside into a network boot) to
// available. The password, read off the KCS wire, works over lanplus and appears in no agent
// log, event, API answer or metric (byte search). A switch port on the rack bridge speaks LLDP
// (lldpd): the ramdisk reports it and the boot NIC carries it as metal3's `lldp`. Phase timings
// go to t.diagnostic.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 missing tools, root or Debian packages fail the test.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BareMetalHost } from '../../agent/host/types.js';
import { skipOrFail } from '../helpers/integration.js';
import { checkRackPrerequisites, formatRackPrerequisites } from '../lab/rack/prerequisites.js';
import { rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';
import { startVirtualRack, type RackHost, type RackHostSpec, type VirtualRack } from '../lab/virtual-rack.js';
import {
  assertSecretNowhere, discoveryAgentConfig, exposedPaths, hostTimeline, listHosts, mustIpmitool, passwordFromKcsLog, rackIpmitool, startRackSwitchPort, timeOf, waitForHost, type IpmiLogin,
} from './discovery-steps.js';
import { seconds } from './provision-steps.js';

const MAC = '52:54:00:d1:5c:01';
/** The guest; its name only names its files: rackside never hears it. */
const GUEST: RackHostSpec = {
  name: 'unknown-0', bmc: 'ipmi', firmware: 'bios', memoryMb: 512, cpus: 1, disks: [{ sizeMb: 32, serial: 'RSDISC0001' }], mac: MAC,
  // 623: the address the BMC reports in-band is `ipmi://127.0.0.1`, the standard port.
  ipmiLanPort: 623, ipmiKcsPort: 9623,
};
/** The user slot the ramdisk takes: the first empty one above the anonymous user 1 and the admin, 2. */
const RACKSIDE_SLOT = 3;
const DISCOVER_DEADLINE_MS = 5 * 60_000;
const AVAILABLE_DEADLINE_MS = 6 * 60_000;

/** What the site did before racking the server: the BMC's LAN address, then power on into PXE. */
async function powerOnAsOperator(rack: VirtualRack, host: RackHost, admin: IpmiLogin): Promise<void> {
  await mustIpmitool(rack, host, admin, ['lan', 'set', '1', 'ipaddr', '127.0.0.1']);
  await mustIpmitool(rack, host, admin, ['chassis', 'bootdev', 'pxe']);
  await mustIpmitool(rack, host, admin, ['chassis', 'power', 'on']);
  await mustIpmitool(rack, host, admin, ['user', 'disable', '2']);
  const refused = await rackIpmitool(rack, host, admin, ['chassis', 'power', 'status']);
  assert.notEqual(refused.code, 0, 'the factory admin is disabled: only a user the guest makes can drive the BMC');
}

function assertRecorded(host: BareMetalHost): void {
  const name = host.metadata.name;
  assert.equal(name, `host-${MAC.replaceAll(':', '')}`, 'named after the boot MAC (QEMU has no system serial)');
  assert.match(host.metadata.annotations?.['rackside.io/discovered-at'] ?? '', /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(host.spec.bmc, { address: 'ipmi://127.0.0.1', credentialsName: `${name}-bmc-secret` }, 'the in-band BMC went into spec.bmc (approve: auto)');
  assert.equal(host.status.errorMessage, '');
  const hw = host.status.hardware;
  assert.ok(hw !== undefined, 'status.hardware from the discovery inventory');
  assert.equal(hw.ramMebibytes, GUEST.memoryMb);
  assert.deepEqual((hw.storage ?? []).map((s) => [s.serialNumber, s.sizeBytes]), [['RSDISC0001', 32 * 1024 * 1024]]);
  assert.ok((hw.nics ?? []).some((n) => n.mac === MAC), `the boot NIC in ${JSON.stringify(hw.nics)}`);
}

/** Rackside powered the guest on (after the operator's power on) and off again, through ipmi_sim's chassis control. */
function assertPoweredByRackside(calls: readonly string[]): void {
  const operatorOn = calls.indexOf('set power 1');
  const racksideOn = calls.indexOf('set power 1', operatorOn + 1);
  assert.ok(operatorOn >= 0 && racksideOn > operatorOn, `rackside powered the guest on for inspection: ${JSON.stringify(calls)}`);
  assert.ok(calls.lastIndexOf('set boot pxe') > operatorOn, `rackside set PXE boot: ${JSON.stringify(calls)}`);
  assert.ok(calls.indexOf('set power 0', racksideOn) > racksideOn, `rackside powered it off after inspection: ${JSON.stringify(calls)}`);
}

test('discovery: an unknown QEMU guest makes its BMC user over its KCS interface and reaches available, powered by rackside with that user', { timeout: 15 * 60_000 }, async (t) => {
  const prerequisites = checkRackPrerequisites({ ipmi: true, uefi: false });
  if (!prerequisites.ok) {
    skipOrFail(t, `virtual rack prerequisites missing:\n${formatRackPrerequisites(prerequisites)}`);
    return;
  }
  const ramdisk = await rackRamdiskOrSkip(t);
  if (ramdisk === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-e2e-discovery-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const rackStarted = Date.now();
  const rack = await startVirtualRack({ hosts: [GUEST], stateDir: dir, ramdiskDir: ramdisk.dir, apply: false, agentConfig: discoveryAgentConfig });
  t.after(() => rack.stop());
  const host = rack.hosts[0];
  assert.ok(host?.ipmi !== undefined);
  t.diagnostic(`rack up in ${seconds(rackStarted)} (namespace ${rack.namespace}, agent pid ${rack.agent.pid})`);
  assert.deepEqual(await listHosts(rack), [], 'rackside knows no host');
  const port = await startRackSwitchPort(rack, 'rack-switch-1');
  t.after(() => port.stop());

  const poweredOn = Date.now();
  await powerOnAsOperator(rack, host, { username: host.ipmi.username, password: host.ipmi.password });
  const byMac = (hosts: BareMetalHost[]): BareMetalHost | undefined => hosts.find((h) => h.spec.bootMACAddress === MAC);
  const discovered = await waitForHost(t, rack, host, 'the guest was discovered', DISCOVER_DEADLINE_MS, byMac);
  t.diagnostic(`discovered as ${discovered.metadata.name} ${seconds(poweredOn)} after power on`);
  const bootNic = (discovered.status.hardware?.nics ?? []).find((n) => n.mac === MAC);
  assert.deepEqual({ ...bootNic?.lldp, switchID: undefined }, { switchID: undefined, portID: port.portId, switchSystemName: port.systemName }, 'the boot NIC\'s LLDP neighbour is the rack switch port');
  assert.match(bootNic?.lldp?.switchID ?? '', /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/, 'the chassis ID is a MAC (lldpd\'s subtype 4)');
  const available = await waitForHost(t, rack, host, 'the discovered host became available', AVAILABLE_DEADLINE_MS, (hosts) => {
    const h = byMac(hosts);
    return h?.status.provisioning.state === 'available' ? h : undefined;
  });
  t.diagnostic(`available ${seconds(poweredOn)} after power on`);
  const inspectedNic = (available.status.hardware?.nics ?? []).find((n) => n.mac === MAC);
  assert.equal(inspectedNic?.lldp?.portID, port.portId, 'the inspection heard the switch port too (its hardware details replace the discovery\'s)');
  assertRecorded(available);
  const name = available.metadata.name;

  const items = await hostTimeline(rack, name);
  const at = {
    discovered: timeOf(items, 'Discovered', (e) => e.reason === 'Discovered'),
    registering: timeOf(items, '→ registering', (e) => e.reason === 'ProvisioningStateChanged' && e.message.includes('→ registering')),
    inspecting: timeOf(items, 'registering → inspecting', (e) => e.reason === 'ProvisioningStateChanged' && e.message.includes('registering → inspecting')),
    available: timeOf(items, '→ available', (e) => e.reason === 'ProvisioningStateChanged' && e.message.includes('→ available')),
  };
  assert.ok(at.discovered <= at.registering && at.registering <= at.inspecting && at.inspecting <= at.available, `phases in order: ${JSON.stringify(at)}`);
  const s = (a: number, b: number): string => `${((b - a) / 1000).toFixed(1)} s`;
  t.diagnostic(`phases: power on → discovered ${s(poweredOn, at.discovered)}, → registering ${s(at.discovered, at.registering)}, registering ${s(at.registering, at.inspecting)}, inspecting ${s(at.inspecting, at.available)}`);

  const serial = await host.serialLog();
  assert.match(serial, new RegExp(`discovery: BMC user rackside \\(slot ${RACKSIDE_SLOT}\\) made on LAN channel 1, BMC at 127\\.0\\.0\\.1`), 'the ramdisk made the user over /dev/ipmi0');
  const password = passwordFromKcsLog(await readFile(host.paths.kcsLog), RACKSIDE_SLOT);
  const created: IpmiLogin = { username: 'rackside', password };
  assert.match(await mustIpmitool(rack, host, created, ['chassis', 'power', 'status']), /Chassis Power is off/, 'the created user works over lanplus; rackside powered the guest off');
  const users = await mustIpmitool(rack, host, created, ['user', 'list', '1']);
  assert.match(users, new RegExp(`^${RACKSIDE_SLOT} +rackside +true +true +true +ADMINISTRATOR`, 'm'), `slot ${RACKSIDE_SLOT}: rackside, ADMINISTRATOR with IPMI messaging`);
  assertPoweredByRackside(await host.ipmi.calls());
  const searched = await assertSecretNowhere(rack, password, exposedPaths(name, MAC));
  t.diagnostic(`the password is in none of ${searched} bytes of agent log, output and API answers`);
});
