/**
 * The network-namespace lab the DHCP tests stand on (test/helpers/netns.ts): unique names,
 * IPv6 off and loopback up, bridged segments that carry traffic, nft packet loss, and a
 * teardown that removes exactly the lab's namespaces and processes — daemons they forked too.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { DHCP_TEST_CLIENT } from '../helpers/dhcp-peers.js';
import { NetnsLab, runCommand, waitFor } from '../helpers/netns.js';

async function listNamespaces(): Promise<string[]> {
  const out = await runCommand('ip', ['netns', 'list']);
  return out.stdout.split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n !== '');
}

test('a lab builds bridged namespaces and tears down exactly what it made', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['nft'] });
  if (lab === undefined) return;
  assert.match(lab.prefix, new RegExp(`^rs${process.pid}n\\d+$`));
  const br = await lab.bridge('lan');
  const a = await lab.namespace('a');
  const b = await lab.namespace('b');
  await lab.attach(a, br, { address: '10.84.0.1/24', mac: '52:54:00:84:00:01' });
  await lab.attach(b, br, { address: '10.84.0.2/24' });
  assert.deepEqual(lab.namespaces, [`${lab.prefix}-lan`, a, b]);
  const ipv6 = await lab.exec(a, 'cat', ['/proc/sys/net/ipv6/conf/all/disable_ipv6']);
  assert.equal(ipv6.stdout.trim(), '1');
  const link = await lab.exec(a, 'ip', ['-o', 'link', 'show', 'eth0']);
  assert.match(link.stdout, /52:54:00:84:00:01/);
  assert.match((await lab.exec(a, 'ip', ['-o', 'link', 'show', 'lo'])).stdout, /UP/);
  await assert.rejects(lab.exec(a, 'false'), /exited with 1/);
  assert.equal((await lab.exec(a, 'false', [], { allowFailure: true })).code, 1);
  await assert.rejects(lab.exec('not-ours', 'true'), /does not belong/);

  // Traffic crosses the bridge; a 50 % nft drop rule on b's input loses some of it, not all.
  const listener = lab.spawn(b, process.execPath, [DHCP_TEST_CLIENT, 'listen', JSON.stringify({ port: 6700, ms: 2500 })]);
  await waitFor(() => listener.stderr().includes('listening'), 'the listener');
  await lab.dropPercent(b, 50, { direction: 'input', ifname: 'eth0' });
  await lab.exec(a, process.execPath, [DHCP_TEST_CLIENT, 'garbage', JSON.stringify({ to: '10.84.0.2', port: 6700, count: 400 })]);
  await listener.exited;
  const { garbage } = JSON.parse(listener.stdout()) as { garbage: number };
  assert.ok(garbage > 100 && garbage < 300, `about half of 400 datagrams arrived (${garbage})`);

  // A daemon forked inside a namespace (not the tracked child) is still removed at teardown.
  const daemon = await lab.exec(a, 'sh', ['-c', 'sleep 300 >/dev/null 2>&1 & echo $!']);
  const daemonPid = Number(daemon.stdout.trim());
  const tracked = lab.spawn(b, 'sleep', ['300']);
  await lab.teardown();
  const left = await listNamespaces();
  assert.deepEqual(left.filter((n) => n.startsWith(`${lab.prefix}-`)), []);
  assert.equal(await tracked.exited, null, 'the tracked process was stopped');
  // Gone, or a zombie waiting for its new parent to reap it.
  await waitFor(async () => !/^\d+ \(sleep\) [^Z]/.test(await readFile(`/proc/${daemonPid}/stat`, 'utf8').catch(() => '')), 'the forked daemon to die', 5000);
  await lab.teardown(); // idempotent
});
