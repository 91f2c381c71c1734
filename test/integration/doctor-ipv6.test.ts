/**
 * `rackside doctor`'s IPv6 check of the provisioning interface in a network namespace (IPv6 on,
 * DAD off): with a dual-stack `provisioning.address` and router advertisements on, the line
 * fails while the interface lacks the IPv6 address, and passes, naming the link-local address,
 * once `ip addr add` put it there; an IPv4-only config has no such line.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, removeDir, scratchDir } from '../helpers/agent-process.js';
import { NetnsLab } from '../helpers/netns.js';
import { enableIpv6 } from './dhcp6-peers.js';

interface JsonReport { checks: { check: string; status: string; detail: string; fix: string }[] }

test('doctor checks the IPv6 provisioning address on the interface', async (t) => {
  const lab = await NetnsLab.create(t);
  if (lab === undefined) return;
  const dir = await scratchDir('doctor6');
  t.after(() => removeDir(dir));
  const stateDir = join(dir, 'state');
  await mkdir(stateDir, { mode: 0o700 });
  const agentNs = await lab.namespace('agent6');
  const peerNs = await lab.namespace('peer6');
  await enableIpv6(lab, agentNs, []);
  await enableIpv6(lab, peerNs, []);
  await lab.link(agentNs, 'eth1', peerNs, 'eth0', { a: '10.78.0.1/24', b: '10.78.0.2/24' });
  await enableIpv6(lab, agentNs, ['eth1']);
  const head = `agent:\n  id: doctor6\n  stateDir: ${stateDir}\n`;
  const dual = join(dir, 'dual.yaml');
  const v4 = join(dir, 'v4.yaml');
  await writeFile(dual, `${head}provisioning:\n  interface: eth1\n  address: [10.78.0.1/24, "fd00:78::1/64"]\ndhcp6:\n  mode: full\n  range: fd00:78::100-fd00:78::1ff\n  routerAdvertisements: on\n`);
  await writeFile(v4, `${head}provisioning:\n  interface: eth1\n  address: 10.78.0.1/24\n`);
  const line = async (configPath: string): Promise<JsonReport['checks'][number] | undefined> => {
    const run = await lab.exec(agentNs, process.execPath, [CLI, 'doctor', '--config', configPath, '--timeout', '1s', '-o', 'json'], { allowFailure: true, timeoutMs: 60_000 });
    return (JSON.parse(run.stdout) as JsonReport).checks.find((c) => c.check === 'provisioning IPv6 address');
  };
  const missing = await line(dual);
  assert.equal(missing?.status, 'fail', JSON.stringify(missing));
  assert.match(missing.detail, /^eth1 has fe80::[0-9a-f:]+\/64, not fd00:78::1$/);
  assert.equal(missing.fix, 'ip addr add fd00:78::1/64 dev eth1, and make it permanent (/etc/network/interfaces or systemd-networkd)');
  await lab.exec(agentNs, 'ip', ['addr', 'add', 'fd00:78::1/64', 'dev', 'eth1', 'nodad']);
  const present = await line(dual);
  assert.equal(present?.status, 'ok', JSON.stringify(present));
  assert.match(present.detail, /^eth1 has fd00:78::1\/64 and fe80::[0-9a-f:]+$/);
  assert.equal(await line(v4), undefined, 'no IPv6 line for an IPv4-only config');
});
