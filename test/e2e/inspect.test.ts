// End to end on a virtual rack (test/lab/virtual-rack.ts): the real agent with the local
// provisioner in a network namespace, two QEMU guests under TCG on its provisioning bridge —
// node-0: SeaBIOS + Debian's iPXE ROM, virtual Redfish BMC over QMP; node-1: OVMF + iPXE ROM,
// ipmi_sim with QMP chassis control. Both are applied as BareMetalHosts, registered, powered on
// by their BMCs into a network boot served by rackside's own DHCP and boot HTTP, inspected by
// the in-ramdisk agent and reach `available` with HardwareDetails that match their QEMU command
// lines; their timelines show DHCP → HTTP (script, kernel, initrd) → ramdisk heartbeat and
// inventory. Everything is killed by PID and the namespace deleted at the end, pass or fail.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 missing tools, root or Debian packages fail the test.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { BareMetalHost, HardwareDetails } from '../../agent/host/types.js';
import type { StoredEvent } from '../../agent/store/types.js';
import { skipOrFail } from '../helpers/integration.js';
import { checkRackPrerequisites, formatRackPrerequisites } from '../lab/rack/prerequisites.js';
import { rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';
import { startVirtualRack, type RackHost, type RackHostSpec, type VirtualRack } from '../lab/virtual-rack.js';
import { getJson, stepAfter, timeline } from './provision-steps.js';

const MiB = 1024 * 1024;
/** Per host, from apply to available: ~60 s each here with two guests sharing 2 cores under TCG. */
const INSPECT_DEADLINE_MS = 5 * 60_000;

const HOSTS: RackHostSpec[] = [
  { name: 'node-0', bmc: 'redfish', firmware: 'bios', memoryMb: 512, cpus: 2, disks: [{ sizeMb: 64, serial: 'RSDISK0001' }, { sizeMb: 32, serial: 'RSDISK0002' }], mac: '52:54:00:aa:00:01' },
  { name: 'node-1', bmc: 'ipmi', firmware: 'uefi', memoryMb: 768, cpus: 1, disks: [{ sizeMb: 48, serial: 'RSDISK1001' }], mac: '52:54:00:aa:00:02' },
];

function tail(text: string, lines = 25): string {
  return text.split('\n').slice(-lines).join('\n');
}

/**
 * Polls the host until `available`; fails with the evidence at the deadline. Errors on the way
 * are reported as diagnostics, not failures: like upstream, a registration or power error is
 * retried with backoff and clears when the BMC answers again.
 */
async function waitAvailable(t: TestContext, rack: VirtualRack, host: RackHost, startedMs: number): Promise<BareMetalHost> {
  const name = host.spec.name;
  let last: BareMetalHost | undefined;
  const errors = new Set<string>();
  while (Date.now() - startedMs < INSPECT_DEADLINE_MS) {
    last = await getJson<BareMetalHost>(rack, `/api/v1/hosts/${name}`);
    if (last.status.provisioning.state === 'available') return last;
    const error = last.status.errorMessage;
    if (error !== '' && !errors.has(error)) {
      errors.add(error);
      t.diagnostic(`${name} in ${last.status.provisioning.state}: ${last.status.errorType}: ${error} (retried)`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  const agentLog = await readFile(rack.agent.logFile, 'utf8').catch(() => '');
  assert.fail(
    `${name} did not become available: state ${last?.status.provisioning.state ?? '?'}, error ${JSON.stringify(last?.status.errorMessage ?? '')}\n` +
      `--- serial log of ${name} (tail)\n${tail(await host.serialLog())}\n--- agent log (tail)\n${tail(agentLog)}`,
  );
}

function assertHardware(spec: RackHostSpec, hw: HardwareDetails | undefined): void {
  assert.ok(hw !== undefined, `${spec.name}: status.hardware is set`);
  assert.equal(hw.ramMebibytes, spec.memoryMb, `${spec.name}: RAM is -m ${spec.memoryMb}`);
  assert.equal(hw.cpu.count, spec.cpus ?? 1, `${spec.name}: CPUs are -smp ${spec.cpus ?? 1}`);
  assert.equal(hw.cpu.arch, 'x86_64');
  assert.equal(hw.systemVendor.manufacturer, 'QEMU');
  assert.match(hw.firmware.bios.vendor ?? '', spec.firmware === 'bios' ? /SeaBIOS/ : /EFI Development Kit|OVMF/);
  const disks = (hw.storage ?? []).map((s) => ({ serial: s.serialNumber, sizeBytes: s.sizeBytes })).sort((a, b) => String(a.serial).localeCompare(String(b.serial)));
  const expected = spec.disks.map((d) => ({ serial: d.serial, sizeBytes: d.sizeMb * MiB })).sort((a, b) => a.serial.localeCompare(b.serial));
  assert.deepEqual(disks, expected, `${spec.name}: disks are the virtio-blk drives of the command line`);
  const nic = (hw.nics ?? []).find((n) => n.mac === spec.mac);
  assert.ok(nic !== undefined, `${spec.name}: a NIC with MAC ${spec.mac} in ${JSON.stringify(hw.nics)}`);
  assert.match(nic.ip ?? '', /^10\.250\.0\.(1[0-9][0-9])$/, `${spec.name}: the NIC has a lease from rackside's range`);
}

/** Index of the first item after `from` matching `match`, or a failure naming the step. */
function assertTimeline(spec: RackHostSpec, items: readonly StoredEvent[]): void {
  const script = `/boot/${spec.mac.replaceAll(':', '-')}.ipxe`;
  const states = items.filter((e) => e.reason === 'ProvisioningStateChanged').map((e) => e.message);
  for (const s of ['none → registering', 'registering → inspecting', '→ available']) {
    assert.ok(states.some((m) => m.includes(s)), `${spec.name}: state change "${s}" in ${JSON.stringify(states)}`);
  }
  let at = stepAfter(spec.name, items, -1, 'InspectionStarted', (e) => e.reason === 'InspectionStarted');
  at = stepAfter(spec.name, items, at, 'DHCPACK with the iPXE script URL', (e) => e.source === 'bootsvc:dhcp' && e.reason === 'DHCPAck' && e.message.includes(script));
  at = stepAfter(spec.name, items, at, `GET ${script}`, (e) => e.source === 'bootsvc:http' && e.message.startsWith(`GET ${script} → 200`));
  at = stepAfter(spec.name, items, at, 'GET /ramdisk/vmlinuz', (e) => e.source === 'bootsvc:http' && e.message.startsWith('GET /ramdisk/vmlinuz → 200'));
  at = stepAfter(spec.name, items, at, 'GET /ramdisk/initrd', (e) => e.source === 'bootsvc:http' && e.message.startsWith('GET /ramdisk/initrd → 200'));
  at = stepAfter(spec.name, items, at, 'the ramdisk\'s own DHCPACK', (e) => e.source === 'bootsvc:dhcp' && e.reason === 'DHCPAck');
  at = stepAfter(spec.name, items, at, 'RamdiskHeartbeat with inspect', (e) => e.reason === 'RamdiskHeartbeat' && e.message.includes('sent inspect'));
  stepAfter(spec.name, items, at, 'RamdiskInventory', (e) => e.reason === 'RamdiskInventory');
}

async function assertBmcCalls(host: RackHost): Promise<void> {
  const calls = await host.bmcCalls();
  const order = (first: string, then: string): void => {
    const a = calls.indexOf(first);
    const b = calls.indexOf(then, a + 1);
    assert.ok(a >= 0 && b > a, `${host.spec.name}: BMC saw "${first}" then "${then}" in ${JSON.stringify(calls)}`);
  };
  if (host.spec.bmc === 'redfish') {
    // Boot override (PATCH Boot) before the Reset action; the QMP backend powered on with the NIC first.
    order('PATCH /redfish/v1/Systems/1', 'POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset');
    assert.ok(calls.includes('powerOn Pxe'), `${host.spec.name}: the guest was powered on to boot from the network: ${JSON.stringify(calls)}`);
    assert.ok(calls.includes('powerOff'), `${host.spec.name}: powered off after inspection: ${JSON.stringify(calls)}`);
  } else {
    order('set boot pxe', 'set power 1');
    order('set power 1', 'set power 0');
  }
}

test('virtual rack: Redfish/BIOS and IPMI/UEFI guests are registered, network-booted and inspected to available', { timeout: 10 * 60_000 }, async (t) => {
  const prerequisites = checkRackPrerequisites({ ipmi: true, uefi: true });
  if (!prerequisites.ok) {
    skipOrFail(t, `virtual rack prerequisites missing:\n${formatRackPrerequisites(prerequisites)}`);
    return;
  }
  const buildStarted = Date.now();
  const ramdisk = await rackRamdiskOrSkip(t);
  if (ramdisk === undefined) return;
  t.diagnostic(`ramdisk ${ramdisk.built ? 'built' : 'reused'} in ${((Date.now() - buildStarted) / 1000).toFixed(1)} s (${ramdisk.dir})`);

  const dir = await mkdtemp(join(tmpdir(), 'rackside-e2e-inspect-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const rackStarted = Date.now();
  const rack = await startVirtualRack({ hosts: HOSTS, stateDir: dir, ramdiskDir: ramdisk.dir, online: false });
  t.after(() => rack.stop());
  const appliedMs = Date.now();
  t.diagnostic(`rack up in ${((appliedMs - rackStarted) / 1000).toFixed(1)} s (namespace ${rack.namespace}, agent pid ${rack.agent.pid})`);

  const results = await Promise.all(rack.hosts.map(async (host) => {
    const available = await waitAvailable(t, rack, host, appliedMs);
    t.diagnostic(`${host.spec.name} (${host.spec.bmc}, ${host.spec.firmware}) available ${((Date.now() - appliedMs) / 1000).toFixed(1)} s after apply`);
    return { host, available };
  }));

  for (const { host, available } of results) {
    const spec = host.spec;
    assert.equal(available.status.errorMessage, '', `${spec.name}: no error`);
    assertHardware(spec, available.status.hardware);
    assertTimeline(spec, await timeline(rack, spec.name));
    const serial = await host.serialLog();
    assert.match(serial, new RegExp(`rackside: ${spec.name} \\(${spec.mac}\\): loading the rackside ramdisk`), `${spec.name}: iPXE ran the per-host script`);
    assert.match(serial, /rackside-ramdisk: started 0\.1\.0-rack/, `${spec.name}: the ramdisk started`);
    // The ramdisk collected and posted it (the host's hardware above is what the agent took); its
    // "inventory sent" line may not reach the console: the agent powers the guest off as soon
    // as it has the inventory.
    assert.match(serial, /rackside-ramdisk: inspect: collecting inventory/);
    await assertBmcCalls(host);
  }
});
