/**
 * `rackside doctor` against a real rogue DHCPv6 server: two network namespaces joined by a veth
 * pair (IPv6 on, duplicate address detection off), Debian's dnsmasq serving DHCPv6 in one, and
 * `rackside doctor` run in the other with an IPv6 provisioning address on the veth. With
 * dnsmasq up and `dhcp6.mode: full` the DHCPv6 line fails naming the rogue's link-local address,
 * and the exit code is 1; with `dhcp6` off the same server is reported as expected; with dnsmasq
 * stopped the line passes. Namespaces and processes go away even on failure.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, removeDir, scratchDir } from '../helpers/agent-process.js';
import { NetnsLab, waitFor, type ExecResult } from '../helpers/netns.js';
import { enableIpv6 } from './dhcp6-peers.js';

interface JsonReport {
  ok: boolean;
  checks: { check: string; status: string; detail: string; fix: string }[];
}

function config(stateDir: string, dhcp6: boolean): string {
  return [
    `agent:\n  id: doctor-test6\n  stateDir: ${stateDir}`,
    'provisioning:\n  interface: eth1\n  address: "fd00:77::1/64"',
    dhcp6 ? 'dhcp6:\n  mode: full\n  range: fd00:77::100-fd00:77::1ff' : '',
    'http:\n  listen: "[::]:8081"',
    '',
  ].join('\n');
}

test('doctor finds a rogue DHCPv6 server (dnsmasq) by its Advertise, names its link-local address, and passes once it is gone', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dnsmasq'] });
  if (lab === undefined) return;
  const dir = await scratchDir('doctor6');
  t.after(() => removeDir(dir));
  const stateDir = join(dir, 'state');
  await mkdir(stateDir, { mode: 0o700 });
  const fullConfig = join(dir, 'full.yaml');
  const offConfig = join(dir, 'off.yaml');
  await writeFile(fullConfig, config(stateDir, true));
  await writeFile(offConfig, config(stateDir, false));

  const agentNs = await lab.namespace('agent6');
  const rogueNs = await lab.namespace('rogue6');
  await enableIpv6(lab, agentNs, []);
  await enableIpv6(lab, rogueNs, []);
  await lab.link(agentNs, 'eth1', rogueNs, 'eth0');
  await enableIpv6(lab, agentNs, ['eth1']);
  await enableIpv6(lab, rogueNs, ['eth0']);
  await lab.exec(agentNs, 'ip', ['addr', 'add', 'fd00:77::1/64', 'dev', 'eth1', 'nodad']);
  await lab.exec(rogueNs, 'ip', ['addr', 'add', 'fd00:77::2/64', 'dev', 'eth0', 'nodad']);
  const linkLocal = async (ns: string, ifname: string): Promise<string> => waitFor(async () => /inet6 (fe80::[0-9a-f:]+)\/64/.exec((await lab.exec(ns, 'ip', ['-6', 'addr', 'show', 'dev', ifname, 'scope', 'link'])).stdout)?.[1], `${ifname}'s link-local address`);
  const rogueAddress = await linkLocal(rogueNs, 'eth0');
  await linkLocal(agentNs, 'eth1');

  const dnsmasq = lab.spawn(rogueNs, 'dnsmasq', [
    '--no-daemon', '--conf-file=/dev/null', '--port=0', '--bind-interfaces', '--interface=eth0', '--except-interface=lo',
    '--dhcp-range=fd00:77::50,fd00:77::60,64,1h', `--dhcp-leasefile=${join(dir, 'dnsmasq.leases')}`, '--pid-file=', '--log-dhcp', '--log-facility=-',
  ]);
  await waitFor(() => /DHCPv6, IP range fd00:77::50 -- fd00:77::60/.test(dnsmasq.stderr()) || (dnsmasq.child.exitCode !== null ? 'exited' : false), 'dnsmasq to start');
  assert.equal(dnsmasq.child.exitCode, null, `dnsmasq exited: ${dnsmasq.stderr()}`);

  const doctor = (configPath: string): Promise<ExecResult> =>
    lab.exec(agentNs, process.execPath, [CLI, 'doctor', '--config', configPath, '--timeout', '2s', '-o', 'json'], { allowFailure: true, timeoutMs: 60_000 });
  const line = (r: ExecResult): JsonReport['checks'][number] | undefined => (JSON.parse(r.stdout) as JsonReport).checks.find((c) => c.check === 'other DHCPv6 servers');

  // dhcp6.mode full: the rogue server fails the run, named by its link-local address and its offer.
  const rogue = await doctor(fullConfig);
  const failed = line(rogue);
  assert.equal(failed?.status, 'fail', rogue.stdout);
  assert.match(failed.detail, new RegExp(`^rogue DHCPv6 on eth1: server ${rogueAddress} \\(DUID [0-9a-f]+\\) advertised fd00:77::(5[0-9a-f]|60)$`));
  assert.equal(failed.fix, `stop the DHCPv6 server at ${rogueAddress} on this segment`);
  assert.equal(rogue.code, 1);
  assert.match(dnsmasq.stderr(), /DHCPSOLICIT\(eth0\)/, 'the Solicit came from the provisioning interface');
  assert.match(dnsmasq.stderr(), /DHCPADVERTISE\(eth0\) fd00:77::/);

  // Without a dhcp6 section (IPv6 address only): another DHCPv6 server is expected.
  const off = line(await doctor(offConfig));
  assert.equal(off?.status, 'ok');
  assert.match(off.detail, new RegExp(`^expected with dhcp6\\.mode off: server ${rogueAddress} `));

  // dnsmasq gone: the line passes.
  await dnsmasq.stop();
  const clean = line(await doctor(fullConfig));
  assert.equal(clean?.status, 'ok', JSON.stringify(clean));
  assert.match(clean.detail, /^no other DHCPv6 server answered a Solicit on eth1 within 2\.0s$/);
});
