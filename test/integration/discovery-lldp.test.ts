/**
 * LLDP in the discovery ramdisk with real frames: the ramdisk's helper (images/helpers/rackside-lldp.c,
 * compiled as the ramdisk builder compiles it, images/helpers.ts) listens in a "host" namespace
 * on one end of a veth pair; Debian's `lldpd` on the other end, in a "switch" namespace, is the
 * switch (system name, port description, management address and two IEEE 802.1 VLAN TLVs from
 * its config). The helper reports that neighbour — chassis and port ID are the switch port's MAC,
 * lldpd's default subtypes — as JSON the discovery report takes (agent/discovery/report.ts),
 * which puts it on the NIC as metal3's `lldp` and `vlans`. A NIC that hears nothing is left out once the bound passes. Needs root,
 * ip, lldpd and a C compiler: skipped without them, failed under RACKSIDE_REQUIRE_INTEGRATION=1.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeDiscoveryReport } from '../../agent/discovery/report.js';
import { nicsWithLldp } from '../../agent/provisioner/local/lldp.js';
import { buildHelpers, defaultHelperSourceDir } from '../../images/helpers.js';
import { NetnsLab, runCommand } from '../helpers/netns.js';

const SWITCH_NAME = 'leaf-test-7';
const PORT_DESCRIPTION = 'rack 4 port 12';

async function helperBinary(dir: string): Promise<string> {
  const built = await buildHelpers(['rackside-lldp'], defaultHelperSourceDir());
  assert.deepEqual(built.missing, [], 'the helper compiles');
  const entry = built.entries[0];
  assert.ok(entry?.type === 'file' && entry.path === 'usr/bin/rackside-lldp');
  const path = join(dir, 'rackside-lldp');
  await writeFile(path, entry.data);
  await chmod(path, 0o755);
  return path;
}

test('rackside-lldp reports the switch name, port and management address lldpd sends across a veth', { timeout: 120_000 }, async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['lldpd', 'cc'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-lldp-'));
  await chmod(dir, 0o755); // lldpd's unprivileged half (user _lldpd) opens the control socket here
  t.after(() => rm(dir, { recursive: true, force: true }));
  const helper = await helperBinary(dir);
  const sw = await lab.namespace('switch');
  const host = await lab.namespace('host');
  await lab.link(sw, 'swp12', host, 'eth0', { a: '192.0.2.1/24' });
  await lab.link(sw, 'swp13', host, 'eth1'); // a second link without lldpd on it
  const switchMac = (await runCommand('ip', ['-n', sw, '-j', 'link', 'show', 'swp12'])).stdout.match(/"address":"([0-9a-f:]{17})"/)?.[1];
  assert.ok(switchMac !== undefined);

  const config = join(dir, 'lldpd.conf');
  await writeFile(config, [
    `configure system hostname ${SWITCH_NAME}`,
    `configure ports swp12 lldp portdescription "${PORT_DESCRIPTION}"`,
    // IEEE 802.1 TLVs (OUI 00-80-C2) as lldpd custom TLVs: Port VLAN ID 42 (subtype 1), VLAN Name 100 "vl100" (subtype 3).
    'configure lldp custom-tlv add oui 00,80,c2 subtype 1 oui-info 00,2a',
    'configure lldp custom-tlv add oui 00,80,c2 subtype 3 oui-info 00,64,05,76,6c,31,30,30',
    '',
  ].join('\n'));
  // -d: foreground (stopped by the lab by PID); its own control socket, not the system's.
  const lldpd = lab.spawn(sw, 'lldpd', ['-d', '-I', 'swp12', '-u', join(dir, 'lldpd.socket'), '-O', config, '-m', '192.0.2.1']);
  // lldpd starts paused and sends its first LLDPDU once lldpcli has applied the config.
  const started = Date.now();
  const run = await lab.exec(host, helper, ['10', 'eth0', 'eth1'], { timeoutMs: 30_000 });
  const lines = run.stdout.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `one neighbour (eth1 hears none): ${run.stdout} ${run.stderr}\nlldpd (exit ${lldpd.child.exitCode ?? 'none'}): ${lldpd.stdout()}${lldpd.stderr()}`);
  const neighbour: unknown = JSON.parse(lines[0] ?? '');
  assert.deepEqual(neighbour, {
    interface: 'eth0', chassis_id: neighbourChassis(neighbour), port_id: switchMac, port_description: PORT_DESCRIPTION,
    system_name: SWITCH_NAME, management_address: '192.0.2.1', vlans: [42, 100],
  });
  t.diagnostic(`neighbour heard, eth1 given up at the bound: ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const report = decodeDiscoveryReport({ inventory: { interfaces: [] }, bmc: null, lldp: [neighbour] });
  const [nic, quiet] = nicsWithLldp<{ name: string; lldp?: object; vlans?: { id?: number }[] }>([{ name: 'eth0' }, { name: 'eth1' }], report.lldp);
  assert.deepEqual(nic?.lldp, { switchID: neighbourChassis(neighbour), portID: switchMac, switchSystemName: SWITCH_NAME });
  assert.deepEqual(nic.vlans, [{ id: 42 }, { id: 100 }], 'the VLANs the switch announced');
  assert.equal(quiet?.lldp, undefined, 'eth1 heard no neighbour');
});

/** lldpd's chassis ID is the MAC of one of the switch's interfaces (subtype 4): checked for form only. */
function neighbourChassis(neighbour: unknown): string {
  const chassis = (neighbour as { chassis_id?: unknown }).chassis_id;
  assert.match(String(chassis), /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/, 'the chassis ID is a MAC address');
  return String(chassis);
}
