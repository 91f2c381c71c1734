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

  // The script's token is the one of the ramdisk boot it starts: registration makes one, and
  // starting inspection makes a fresh one and power-cycles the host, whose firmware fetches the
  // script again. So, like a rebooted host, take the token from the script as it is now each time
  // (the flake this replaces: a script read before inspection started, its token then refused).
  const currentScript = async (): Promise<string | undefined> => {
    const res = await fetch(`${boot}/boot/00-5c-52-31-3a-9c.ipxe`);
    const text = await res.text();
    return res.status === 200 && text.includes('rackside.token=') ? text : undefined;
  };
  const script = await waitFor('the ramdisk script', currentScript);
  assert.match(script, /^#!ipxe/);
  assert.match(script, /kernel .*\/ramdisk\/vmlinuz/);
  assert.match(script, /console=ttyS0,115200/);
  assert.match(script, new RegExp(`rackside\\.url=${boot.replaceAll('.', '\\.')}`));
  const tokenOf = (text: string): string => /rackside\.token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? '';
  assert.equal(tokenOf(script).length, 43);

  const heartbeat = async (token: string): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${boot}/ramdisk/v1/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ version: 'test', boot_mac: '00:5c:52:31:3a:9c', ip: '192.0.2.77', uptime_seconds: 5, last_command_id: null }),
    });
    return { status: res.status, text: await res.text() };
  };
  const { command, token } = await waitFor('the inspect command', async () => {
    const current = tokenOf((await currentScript()) ?? '');
    const answer = await heartbeat(current);
    // 401 until the inspection's ramdisk boot: the registration's token is good for no operation.
    assert.ok(answer.status === 200 || answer.status === 401, `heartbeat: ${answer.status} ${answer.text}`);
    return answer.status === 200 && answer.text.includes('command=inspect') ? { command: answer.text, token: current } : undefined;
  });
  assert.equal(token.length, 43);
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
