/**
 * The agent with the local provisioner and its boot services, end to end over HTTP: a host
 * with a (fake) BMC is registered and network-booted; the iPXE script for its MAC names the
 * ramdisk with its token; a ramdisk speaking the callback protocol gets `inspect`, posts an
 * inventory, and the host becomes available; the boot timeline shows the HTTP fetches.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { hostManifests } from '../helpers/host-harness.js';
import { startLocalAgent, waitFor } from '../helpers/local-agent.js';

test('local provisioner: register, network-boot the ramdisk, inspect, available — with a timeline', async (t) => {
  const dir = await scratchDir('local');
  t.after(() => removeDir(dir));
  const { api, boot } = await startLocalAgent(t, dir);
  const [secret, host] = hostManifests('rack1-node0') as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = 'fake://rack1-node0-bmc';
  const applied = await fetch(`${api}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([secret, host]) });
  assert.equal(applied.status, 200, await applied.text());

  const script = await waitFor('the ramdisk script', async () => {
    const res = await fetch(`${boot}/boot/00-5c-52-31-3a-9c.ipxe`);
    const text = await res.text();
    return res.status === 200 && text.includes('rackside.token=') ? text : undefined;
  });
  assert.match(script, /^#!ipxe/);
  assert.match(script, /kernel .*\/ramdisk\/vmlinuz/);
  assert.match(script, /console=ttyS0,115200/);
  const token = /rackside\.token=([A-Za-z0-9_-]+)/.exec(script)?.[1] ?? '';
  assert.equal(token.length, 43);
  assert.match(script, new RegExp(`rackside\\.url=${boot.replaceAll('.', '\\.')}`));

  const heartbeat = async (last: string | null): Promise<string> => {
    const res = await fetch(`${boot}/ramdisk/v1/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ version: 'test', boot_mac: '00:5c:52:31:3a:9c', ip: '192.0.2.77', uptime_seconds: 5, last_command_id: last }),
    });
    assert.equal(res.status, 200);
    return res.text();
  };
  const command = await waitFor('the inspect command', async () => {
    const text = await heartbeat(null);
    return text.includes('command=inspect') ? text : undefined;
  });
  const commandId = /command_id=(\S+)/.exec(command)?.[1] ?? '';
  const inventory = {
    cpu: { model_name: 'Test CPU', count: 4, architecture: 'x86_64', frequency: '2000' },
    memory: { physical_mb: 2048 },
    disks: [{ name: '/dev/vda', size: 8589934592, rotational: false, serial: 'VDA1' }],
    interfaces: [{ name: 'eth0', mac_address: '00:5c:52:31:3a:9c', ipv4_address: '192.0.2.77', pxe_enabled: true }],
  };
  const posted = await fetch(`${boot}/ramdisk/v1/inventory`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ command_id: commandId, inventory }),
  });
  assert.equal(posted.status, 200);

  const available = await waitFor('available', async () => {
    const res = await fetch(`${api}/api/v1/hosts/rack1-node0`);
    const body = (await res.json()) as { status: { provisioning: { state: string }; hardware?: { cpu: { count?: number } } } };
    return body.status.provisioning.state === 'available' ? body : undefined;
  });
  assert.equal(available.status.hardware?.cpu.count, 4);

  const timeline = (await (await fetch(`${api}/api/v1/hosts/rack1-node0/timeline`)).json()) as { items?: { source: string; reason: string }[] } | { source: string; reason: string }[];
  const items = Array.isArray(timeline) ? timeline : timeline.items ?? [];
  assert.ok(items.some((e) => e.source === 'bootsvc:http'), `an HTTP boot event in ${JSON.stringify(items.map((e) => e.reason))}`);
  assert.ok(items.some((e) => e.source === 'ramdisk' && e.reason === 'RamdiskInventory'));

  // A stale token after the host is deleted gets 401.
  const forged = await fetch(`${boot}/ramdisk/v1/heartbeat`, { method: 'POST', headers: { authorization: 'Bearer nope-nope-nope-nope', 'content-type': 'application/json' }, body: '{}' });
  assert.equal(forged.status, 401);
});
