// End to end over IPv6 on a virtual rack (test/lab/virtual-rack.ts): the real agent with the
// local provisioner on an IPv6-only provisioning bridge (`network: ipv6`: DHCPv6 full and
// rackside's own router advertisements with the Managed flag, no DHCPv4, boot HTTP and TFTP on
// `::`), one QEMU guest under TCG — SeaBIOS + Debian's iPXE ROM, virtual Redfish BMC over QMP.
// It is applied as a BareMetalHost, powered on into iPXE, which gets its per-host script URL
// (a bracketed literal) by DHCPv6 and fetches script, kernel and initrd over IPv6; the ramdisk
// (rackside.url an IPv6 literal) gets its address with rackside-dhcp6, calls back over IPv6
// and the host reaches `available`. Asserted: the timeline (DHCPv6 → HTTP → the ramdisk's own
// DHCPv6 → heartbeat → inventory), that iPXE (DUID-UUID, user class iPXE) and the ramdisk
// (DUID-LL) both resolved to the host's MAC and got one address, which is the one DHCPv6 lease
// in the agent's store (`dhcp6/<mac>`, read once the agent stopped), the NIC's address in the
// HardwareDetails, and the heartbeat's. Everything is killed by PID and the namespace deleted at
// the end, pass or fail. A second test runs the same guest on a dual-stack bridge (DHCPv4 and
// DHCPv6 with rackside's router advertisements): whichever family iPXE fetched its script over,
// the ramdisk calls back over that family, at the address that family's lease table holds for
// the host's MAC. An OVMF guest with the iPXE EFI ROM runs the IPv6-only chain too, and one
// without option ROM (IPv4 off in the firmware) starts from the firmware's own UEFI PXE over
// IPv6: DHCPv6 option 59 `tftp://[…]/ipxe.efi`, rackside's TFTP server on `[::]:69`, then the
// same chain — the firmware (DUID-UUID), iPXE and the ramdisk hold the one lease of the MAC.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 missing prerequisites fail.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createLeaseStore } from '../../agent/boot/lease-store.js';
import { createLease6Store } from '../../agent/boot/lease-store6.js';
import type { BareMetalHost } from '../../agent/host/types.js';
import { openStore } from '../../agent/store/index.js';
import type { StoredEvent } from '../../agent/store/types.js';
import { skipOrFail } from '../helpers/integration.js';
import { checkRackPrerequisites, formatRackPrerequisites } from '../lab/rack/prerequisites.js';
import { rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';
import { startVirtualRack, type RackHost, type RackHostSpec, type VirtualRack } from '../lab/virtual-rack.js';
import { getJson, span, stepAfter, tail, timeline } from './provision-steps.js';
import { isIpv6Address } from '../../bootsvc/net/ip-text.js';

/** From apply to available: one guest under TCG on a shared 2-core machine. */
const INSPECT_DEADLINE_MS = 6 * 60_000;
const HOST: RackHostSpec = { name: 'node-6', bmc: 'redfish', firmware: 'bios', memoryMb: 512, cpus: 1, disks: [{ sizeMb: 32, serial: 'RSDISK6001' }], mac: '52:54:00:aa:06:01' };
/** OVMF with Debian's iPXE EFI ROM for virtio-net (qemu-guest.ts). */
const UEFI_HOST: RackHostSpec = { name: 'node-7', bmc: 'redfish', firmware: 'uefi', memoryMb: 768, cpus: 1, disks: [{ sizeMb: 32, serial: 'RSDISK7001' }], mac: '52:54:00:aa:07:01' };
/** OVMF without option ROM, IPv4 off: its own UEFI PXE over IPv6 loads ipxe.efi by TFTP (qemu-guest.ts `uefiPxe6`). */
const PXE6_HOST: RackHostSpec = { name: 'node-8', bmc: 'redfish', firmware: 'uefi', uefiPxe6: true, memoryMb: 768, cpus: 1, disks: [{ sizeMb: 32, serial: 'RSDISK8001' }], mac: '52:54:00:aa:08:01' };
const AGENT6 = 'fd00:250::1';
const IN_RANGE = /^fd00:250::1[0-9a-f]{2}$/;

async function waitAvailable(t: TestContext, rack: VirtualRack, host: RackHost, startedMs: number): Promise<BareMetalHost> {
  let last: BareMetalHost | undefined;
  const errors = new Set<string>();
  while (Date.now() - startedMs < INSPECT_DEADLINE_MS) {
    last = await getJson<BareMetalHost>(rack, `/api/v1/hosts/${host.spec.name}`);
    if (last.status.provisioning.state === 'available') return last;
    const error = last.status.errorMessage;
    if (error !== '' && !errors.has(error)) {
      errors.add(error);
      t.diagnostic(`${host.spec.name} in ${last.status.provisioning.state}: ${error} (retried)`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  const agentLog = await readFile(rack.agent.logFile, 'utf8').catch(() => '');
  assert.fail(`${host.spec.name} did not become available: state ${last?.status.provisioning.state ?? '?'}\n--- serial (tail)\n${tail(await host.serialLog())}\n--- agent log (tail)\n${tail(agentLog)}`);
}

/** The DHCPv6 exchange events of the timeline: what each client sent (detail names the MAC source) and the replies. */
function dhcp6Events(items: readonly StoredEvent[]): { detail: string; userClass?: string; address?: string; bootFile?: string; reason: string }[] {
  return items.filter((e) => e.source === 'bootsvc:dhcp' && ((e.data as { detail?: string } | undefined)?.detail ?? '').startsWith('dhcpv6 '))
    .map((e) => ({ reason: e.reason, ...(e.data as { detail: string; userClass?: string; address?: string; bootFile?: string }) }));
}

/** Asserts the boot chain in order; returns the address each DHCPv6 stage was given and the phase breakdown. */
function assertTimeline(spec: RackHostSpec, items: readonly StoredEvent[]): { firmwareAddress?: string; ipxeAddress: string; ramdiskAddress: string; phases: string } {
  const name = spec.name;
  const script = `/boot/${spec.mac.replaceAll(':', '-')}.ipxe`;
  const isDhcp6Reply = (e: StoredEvent): boolean => e.source === 'bootsvc:dhcp' && e.reason === 'DHCPAck' && (e.data as { detail?: string } | undefined)?.detail === 'dhcpv6 reply';
  const started = stepAfter(name, items, -1, 'InspectionStarted', (e) => e.reason === 'InspectionStarted');
  // The firmware's own PXE (uefiPxe6): its Reply names ipxe.efi on rackside's TFTP server, which serves it over IPv6.
  const firmware = spec.uefiPxe6 === true
    ? stepAfter(name, items, started, 'the firmware\'s DHCPv6 Reply with tftp://[…]/ipxe.efi', (e) => isDhcp6Reply(e) && e.message.includes(`tftp://[${AGENT6}]/ipxe.efi`))
    : started;
  const loader = spec.uefiPxe6 === true
    ? stepAfter(name, items, firmware, 'TFTP ipxe.efi done', (e) => e.source === 'bootsvc:tftp' && (e.data as { phase?: string; file?: string } | undefined)?.phase === 'done' && ((e.data as { file?: string }).file ?? '').replace(/^\/+/, '') === 'ipxe.efi')
    : started;
  const ipxe = stepAfter(name, items, loader, 'the DHCPv6 Reply with the bracketed script URL', (e) => isDhcp6Reply(e) && e.message.includes(`http://[${AGENT6}]:8081${script}`));
  let at = stepAfter(name, items, ipxe, `GET ${script}`, (e) => e.source === 'bootsvc:http' && e.message.startsWith(`GET ${script} → 200`));
  at = stepAfter(name, items, at, 'GET /ramdisk/vmlinuz', (e) => e.source === 'bootsvc:http' && e.message.startsWith('GET /ramdisk/vmlinuz → 200'));
  const initrd = stepAfter(name, items, at, 'GET /ramdisk/initrd', (e) => e.source === 'bootsvc:http' && e.message.startsWith('GET /ramdisk/initrd → 200'));
  const solicit = stepAfter(name, items, initrd, 'the ramdisk\'s DHCPv6 Solicit (DUID-LL, no user class)', (e) => e.source === 'bootsvc:dhcp' && (e.data as { detail?: string; userClass?: string } | undefined)?.detail === 'dhcpv6 solicit (MAC by link-local-eui64)' && (e.data as { userClass?: string }).userClass === undefined);
  const reply = stepAfter(name, items, solicit, 'the ramdisk\'s DHCPv6 Reply', isDhcp6Reply);
  const heartbeat = stepAfter(name, items, reply, 'RamdiskHeartbeat with inspect', (e) => e.reason === 'RamdiskHeartbeat' && e.message.includes('sent inspect'));
  const inventory = stepAfter(name, items, heartbeat, 'RamdiskInventory', (e) => e.reason === 'RamdiskInventory');
  const addressAt = (i: number): string => String((items[i]?.data as { address?: string } | undefined)?.address);
  const phases = [
    ...(spec.uefiPxe6 === true ? [span(items, 'inspection start → the firmware\'s DHCPv6 Reply', started, firmware), span(items, '→ ipxe.efi over TFTP', firmware, loader)] : []),
    span(items, `${spec.uefiPxe6 === true ? '→' : 'inspection start →'} iPXE's DHCPv6 Reply`, loader, ipxe), span(items, '→ initrd fetched', ipxe, initrd),
    span(items, '→ the ramdisk\'s Solicit', initrd, solicit), span(items, '→ its Reply', solicit, reply),
    span(items, '→ first heartbeat', reply, heartbeat), span(items, '→ inventory', heartbeat, inventory),
  ].join(', ');
  return { ...(spec.uefiPxe6 === true ? { firmwareAddress: addressAt(firmware) } : {}), ipxeAddress: addressAt(ipxe), ramdiskAddress: addressAt(reply), phases };
}

/** `spec` alone on a virtual rack of `network`, applied and waited for until available; undefined when skipped. */
async function inspectAlone(t: TestContext, spec: RackHostSpec, network: 'ipv6' | 'dual'): Promise<{ rack: VirtualRack; host: RackHost; available: BareMetalHost; dir: string; seconds: number } | undefined> {
  const prerequisites = checkRackPrerequisites({ ipmi: false, uefi: spec.firmware === 'uefi' });
  if (!prerequisites.ok) {
    skipOrFail(t, `virtual rack prerequisites missing:\n${formatRackPrerequisites(prerequisites)}`);
    return undefined;
  }
  const buildStarted = Date.now();
  const ramdisk = await rackRamdiskOrSkip(t);
  if (ramdisk === undefined) return undefined;
  t.diagnostic(`ramdisk ${ramdisk.built ? 'built' : 'reused'} in ${((Date.now() - buildStarted) / 1000).toFixed(1)} s`);
  assert.ok(ramdisk.manifest.inputs.tools.some((tool) => tool.name === 'rackside-dhcp6'), 'the ramdisk has the rackside-dhcp6 helper (needs a C compiler on the build host)');
  const dir = await mkdtemp(join(tmpdir(), `rackside-e2e-inspect-${network}-`));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const rack = await startVirtualRack({ hosts: [spec], stateDir: dir, ramdiskDir: ramdisk.dir, online: false, network });
  t.after(() => rack.stop());
  const appliedMs = Date.now();
  const host = rack.hosts[0];
  assert.ok(host !== undefined);
  const available = await waitAvailable(t, rack, host, appliedMs);
  return { rack, host, available, dir, seconds: (Date.now() - appliedMs) / 1000 };
}

/** Inspects `spec` alone on an IPv6-only virtual rack and asserts the chain, the addresses and the lease table (the module comment). */
async function inspectIpv6Only(t: TestContext, spec: RackHostSpec): Promise<void> {
  const inspected = await inspectAlone(t, spec, 'ipv6');
  if (inspected === undefined) return;
  const { rack, host, available, dir } = inspected;
  t.diagnostic(`${spec.name} (${spec.bmc}, ${spec.firmware}, IPv6-only) available ${inspected.seconds.toFixed(1)} s after apply`);

  assert.equal(available.status.errorMessage, '');
  const items = await timeline(rack, spec.name);
  const { firmwareAddress, ipxeAddress, ramdiskAddress, phases } = assertTimeline(spec, items);
  t.diagnostic(phases);
  assert.match(ipxeAddress, IN_RANGE);
  assert.equal(ramdiskAddress, ipxeAddress, 'iPXE and the ramdisk, two DUIDs, got the one address of the host\'s MAC');
  if (firmwareAddress !== undefined) assert.equal(firmwareAddress, ipxeAddress, 'the firmware (DUID-UUID) got that address too');
  // Every DHCPv6 client message of the guest resolved to its MAC; iPXE said so by its user class.
  const received = dhcp6Events(items).filter((e) => /^dhcpv6 (solicit|request)/.test(e.detail));
  assert.ok(received.some((e) => e.userClass === 'iPXE'), JSON.stringify(received));
  assert.ok(received.every((e) => e.detail.endsWith('(MAC by link-local-eui64)')), JSON.stringify(received));
  const nic = (available.status.hardware?.nics ?? []).find((n) => n.mac === spec.mac && n.ip !== undefined && n.ip.includes(':'));
  assert.equal(nic?.ip, ramdiskAddress, `the NIC's IPv6 address in ${JSON.stringify(available.status.hardware?.nics)}`);
  assert.ok(items.some((e) => e.reason === 'RamdiskHeartbeat' && e.message.includes(` at ${ramdiskAddress} is up`)), 'the ramdisk reported its DHCPv6 address');
  const serial = await host.serialLog();
  assert.match(serial, new RegExp(`rackside-ramdisk: network: DHCPv6 gave \\S+ ${ramdiskAddress.replaceAll('.', '\\.')}`));
  assert.match(serial, new RegExp(`rackside-ramdisk: agent: reporting to http://\\[${AGENT6}\\]:8081`));
  assert.doesNotMatch(serial, /udhcpc|10\.250\.0\./, 'no DHCPv4 in the ramdisk');

  await rack.stop();
  const store = await openStore({ stateDir: join(dir, 'agent-state') });
  try {
    const leases = await createLease6Store(store.leases).list();
    assert.deepEqual(leases.map((l) => [l.mac, l.address, l.state]), [[spec.mac, ramdiskAddress, 'bound']], 'one DHCPv6 lease, the host\'s MAC, for firmware-iPXE and ramdisk alike');
  } finally {
    await store.close();
  }
}

test('virtual rack, IPv6-only: a SeaBIOS/iPXE guest is network-booted over DHCPv6 and inspected to available, one lease per MAC', { timeout: 12 * 60_000 }, async (t) => {
  await inspectIpv6Only(t, HOST);
});

test('virtual rack, IPv6-only: an OVMF guest (iPXE EFI ROM) likewise', { timeout: 12 * 60_000 }, async (t) => {
  await inspectIpv6Only(t, UEFI_HOST);
});

test('virtual rack, IPv6-only: an OVMF guest without option ROM — its own UEFI PXE over IPv6 loads ipxe.efi by TFTP, then the same chain', { timeout: 12 * 60_000 }, async (t) => {
  await inspectIpv6Only(t, PXE6_HOST);
});

test('virtual rack, dual-stack: the ramdisk calls back over the family iPXE fetched its script over, at that family\'s lease for the MAC', { timeout: 12 * 60_000 }, async (t) => {
  const inspected = await inspectAlone(t, HOST, 'dual');
  if (inspected === undefined) return;
  const { rack, host, available, dir } = inspected;
  const items = await timeline(rack, HOST.name);
  const script = `/boot/${HOST.mac.replaceAll(':', '-')}.ipxe`;
  const get = items.find((e) => e.source === 'bootsvc:http' && e.message.startsWith(`GET ${script} → 200`));
  const from = (get?.data as { clientAddress?: string } | undefined)?.clientAddress ?? '';
  const over6 = isIpv6Address(from);
  t.diagnostic(`${HOST.name} (redfish, bios, dual-stack) available ${inspected.seconds.toFixed(1)} s after apply; iPXE fetched its script over IPv${over6 ? 6 : 4} from ${from}`);
  assert.equal(available.status.errorMessage, '');
  const serial = await host.serialLog();
  const agentUrl = over6 ? `http://[${AGENT6}]:8081` : 'http://10.250.0.1:8081';
  assert.ok(serial.includes(`rackside-ramdisk: agent: reporting to ${agentUrl}`), `the ramdisk reports to ${agentUrl}:\n${tail(serial)}`);
  const heartbeat = items.find((e) => e.reason === 'RamdiskHeartbeat');
  const ip = /^ramdisk \S* ?at (\S+) is up/.exec(heartbeat?.message ?? '')?.[1] ?? '';
  assert.match(ip, over6 ? IN_RANGE : /^10\.250\.0\.1\d\d$/, heartbeat?.message);
  await rack.stop();
  const store = await openStore({ stateDir: join(dir, 'agent-state') });
  try {
    const leases = over6 ? await createLease6Store(store.leases).list() : await createLeaseStore(store.leases).list();
    assert.ok(leases.some((l) => l.mac === HOST.mac && l.address === ip), `the IPv${over6 ? 6 : 4} lease table holds ${ip} for ${HOST.mac}: ${JSON.stringify(leases)}`);
  } finally {
    await store.close();
  }
});
