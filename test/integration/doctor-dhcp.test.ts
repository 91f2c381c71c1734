/**
 * `rackside doctor` against a real rogue DHCP server: two network namespaces joined by a veth
 * pair, Debian's dnsmasq (DHCP only: port=0, no-ping, bind-interfaces) in one, and
 * `rackside doctor` run in the other with its provisioning interface on the veth. With dnsmasq
 * up the table names the rogue server's address and the address it offered, and the exit code
 * is 1 (dhcp.mode full); with dhcp.mode proxy the same server is reported as expected; with
 * dnsmasq stopped the DHCP line passes. A real agent started as the unit starts it (Nice=-5) has
 * its event-loop priority read by pid; reniced to 0 it gets a warning whose fix, run as printed,
 * clears it. Namespaces and processes go away even on failure.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, removeDir, scratchDir } from '../helpers/agent-process.js';
import { NetnsLab, waitFor, type ExecResult } from '../helpers/netns.js';
import { atUnitNice, unitNice } from '../helpers/unit-nice.js';

const AGENT_ADDRESS = '10.77.0.1';
const ROGUE_ADDRESS = '10.77.0.2';

interface JsonReport {
  ok: boolean;
  checks: { check: string; status: string; detail: string; fix: string }[];
}

function config(stateDir: string, mode: 'full' | 'proxy'): string {
  return [
    `agent:\n  id: doctor-test\n  stateDir: ${stateDir}`,
    `provisioning:\n  interface: eth1\n  address: ${AGENT_ADDRESS}/24`,
    mode === 'full' ? 'dhcp:\n  mode: full\n  range: 10.77.0.100-10.77.0.199' : 'dhcp:\n  mode: proxy',
    `http:\n  listen: ${AGENT_ADDRESS}:8081`,
    '',
  ].join('\n');
}

function dhcpLine(table: string): string {
  const line = table.split('\n').find((l) => l.startsWith('other DHCP servers'));
  assert.ok(line !== undefined, table);
  return line;
}

test('doctor finds a rogue DHCP server on the provisioning segment, and passes once it is gone', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dnsmasq'] });
  if (lab === undefined) return;
  const dir = await scratchDir('doctor');
  t.after(() => removeDir(dir));
  const stateDir = join(dir, 'state');
  await mkdir(stateDir, { mode: 0o700 });
  const fullConfig = join(dir, 'full.yaml');
  const proxyConfig = join(dir, 'proxy.yaml');
  await writeFile(fullConfig, config(stateDir, 'full'));
  await writeFile(proxyConfig, config(stateDir, 'proxy'));

  const agentNs = await lab.namespace('agent');
  const rogueNs = await lab.namespace('rogue');
  await lab.link(agentNs, 'eth1', rogueNs, 'eth0', { a: `${AGENT_ADDRESS}/24`, b: `${ROGUE_ADDRESS}/24` });
  const agentMac = (await lab.exec(agentNs, 'cat', ['/sys/class/net/eth1/address'])).stdout.trim();

  const dnsmasq = lab.spawn(rogueNs, 'dnsmasq', [
    '--no-daemon', '--conf-file=/dev/null', '--port=0', '--no-ping', '--bind-interfaces', '--interface=eth0', '--except-interface=lo',
    '--dhcp-range=10.77.0.50,10.77.0.60,255.255.255.0,1h', `--dhcp-leasefile=${join(dir, 'dnsmasq.leases')}`, '--pid-file=',
    '--log-dhcp', '--log-facility=-',
  ]);
  await waitFor(() => /DHCP, IP range 10\.77\.0\.50 -- 10\.77\.0\.60/.test(dnsmasq.stderr()) || (dnsmasq.child.exitCode !== null ? 'exited' : false), 'dnsmasq to start');
  assert.equal(dnsmasq.child.exitCode, null, `dnsmasq exited: ${dnsmasq.stderr()}`);

  const doctor = (configPath: string, extra: string[] = []): Promise<ExecResult> =>
    lab.exec(agentNs, process.execPath, [CLI, 'doctor', '--config', configPath, '--timeout', '2s', ...extra], { allowFailure: true, timeoutMs: 60_000 });

  // dhcp.mode full: the rogue server fails the run, named with its address and its offer.
  const rogue = await doctor(fullConfig);
  const line = dhcpLine(rogue.stdout);
  assert.match(line, /\bFAIL\b/, rogue.stdout);
  assert.match(line, new RegExp(`rogue DHCP on eth1: server ${ROGUE_ADDRESS.replaceAll('.', '\\.')} offered 10\\.77\\.0\\.(5\\d|60)\\b`));
  assert.match(line, /stop the DHCP server at 10\.77\.0\.2/);
  assert.equal(rogue.code, 1, rogue.stdout + rogue.stderr);
  assert.match(rogue.stdout, /^CHECK\s+RESULT\s+DETAIL\s+FIX$/m);
  assert.match(dnsmasq.stderr(), new RegExp(`DHCPDISCOVER\\(eth0\\) ${agentMac}`), 'the DISCOVER came from the provisioning interface');
  assert.match(dnsmasq.stderr(), new RegExp(`DHCPOFFER\\(eth0\\) 10\\.77\\.0\\.\\d+ ${agentMac}`));

  // dhcp.mode proxy: a site DHCP server is expected there.
  const proxy = await doctor(proxyConfig, ['-o', 'json']);
  const proxyReport = JSON.parse(proxy.stdout) as JsonReport;
  const proxyLine = proxyReport.checks.find((c) => c.check === 'other DHCP servers');
  assert.equal(proxyLine?.status, 'ok', proxy.stdout);
  assert.match(proxyLine.detail, /expected with dhcp\.mode proxy: server 10\.77\.0\.2 offered/);

  // dnsmasq gone: the DHCP check passes, and the exit code follows the other lines only.
  await dnsmasq.stop();
  const clean = await doctor(fullConfig, ['-o', 'json']);
  const report = JSON.parse(clean.stdout) as JsonReport;
  const cleanLine = report.checks.find((c) => c.check === 'other DHCP servers');
  assert.equal(cleanLine?.status, 'ok', clean.stdout);
  assert.match(cleanLine.detail, /no other DHCP server answered a DISCOVER on eth1 within 2\.0s/);
  const failed = report.checks.filter((c) => c.status === 'fail');
  assert.equal(clean.code, failed.length === 0 ? 0 : 1, JSON.stringify(failed));
  assert.equal(report.ok, failed.length === 0);
  // The network checks that depend on the namespace pass there.
  for (const check of ['config', 'provisioning interface', 'port 67/udp (DHCP)', 'port 69/udp (TFTP)', 'port 4011/udp (proxyDHCP)', 'port 8081/tcp (boot HTTP)', 'state dir writable', 'clock', 'erase record key']) {
    assert.equal(report.checks.find((c) => c.check === check)?.status, 'ok', `${check}: ${JSON.stringify(report.checks.find((c) => c.check === check))}`);
  }
});

test('doctor reports a port held by another process and a missing interface', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dnsmasq', 'ss'] });
  if (lab === undefined) return;
  const dir = await scratchDir('doctor');
  t.after(() => removeDir(dir));
  const ns = await lab.namespace('agent');
  await lab.addAddress(ns, 'lo', '10.78.0.1/32');
  const missing = join(dir, 'missing.yaml');
  await writeFile(missing, `agent:\n  stateDir: ${dir}\nprovisioning:\n  interface: eth9\n  address: 10.78.0.1/24\ndhcp:\n  mode: proxy\n`);
  // A DHCP-only dnsmasq holding 67 in the namespace.
  const dnsmasq = lab.spawn(ns, 'dnsmasq', [
    '--no-daemon', '--conf-file=/dev/null', '--port=0', '--dhcp-range=10.78.0.50,10.78.0.60,1h', '--dhcp-leasefile=/dev/null', '--pid-file=', '--log-facility=-',
  ]);
  await waitFor(() => /DHCP, IP range/.test(dnsmasq.stderr()) || (dnsmasq.child.exitCode !== null ? 'exited' : false), 'dnsmasq to start');
  const r = await lab.exec(ns, process.execPath, [CLI, 'doctor', '--config', missing, '--timeout', '1s', '-o', 'json'], { allowFailure: true, timeoutMs: 60_000 });
  const report = JSON.parse(r.stdout) as JsonReport;
  const iface = report.checks.find((c) => c.check === 'provisioning interface');
  assert.equal(iface?.status, 'fail');
  assert.match(iface.detail, /interface eth9 not found/);
  const port67 = report.checks.find((c) => c.check === 'port 67/udp (DHCP)');
  assert.equal(port67?.status, 'fail', JSON.stringify(port67));
  assert.match(port67.detail, new RegExp(`held by dnsmasq \\(pid ${dnsmasq.pid}\\)`));
  assert.match(port67.fix, new RegExp(`stop dnsmasq \\(pid ${dnsmasq.pid}\\)`));
  assert.equal(report.checks.find((c) => c.check === 'other DHCP servers')?.status, 'skip');
  assert.equal(r.code, 1);
});

test('doctor reads the running agent\'s event-loop priority: ok at the unit\'s Nice=-5, a warning with its renice fix at 0, ok once that ran', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['ss', 'renice', 'nice'] });
  if (lab === undefined) return;
  const dir = await scratchDir('doctor-nice');
  t.after(() => removeDir(dir));
  const stateDir = join(dir, 'state');
  await mkdir(stateDir, { mode: 0o700 });
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(configPath, config(stateDir, 'full'));
  const agentNs = await lab.namespace('agent');
  const peerNs = await lab.namespace('peer');
  await lab.link(agentNs, 'eth1', peerNs, 'eth0', { a: `${AGENT_ADDRESS}/24`, b: `${ROGUE_ADDRESS}/24` });
  // Started as the unit starts it (nice, then exec: the same pid).
  const agent = lab.spawn(agentNs, ...atUnitNice(process.execPath, [CLI, 'agent', '--config', configPath]));
  const started = await waitFor(() => agent.stdout().includes('rackside agent ready') || (agent.child.exitCode !== null ? `exited: ${agent.stderr()}` : false), 'the agent to be ready', 30_000);
  assert.equal(started, true, String(started));
  assert.match(agent.stdout(), new RegExp(`"eventLoopNice":${String(unitNice())}\\b`), 'the ready line names the event loop\'s nice value');

  const priority = async (): Promise<{ check: string; status: string; detail: string; fix: string } | undefined> => {
    const r = await lab.exec(agentNs, process.execPath, [CLI, 'doctor', '--config', configPath, '--timeout', '1s', '-o', 'json'], { allowFailure: true, timeoutMs: 60_000 });
    return (JSON.parse(r.stdout) as JsonReport).checks.find((c) => c.check === 'event-loop priority');
  };
  const raised = await priority();
  assert.deepEqual([raised?.status, raised?.detail], ['ok', `agent pid ${String(agent.pid)}: event loop at nice ${String(unitNice())}`]);

  await lab.exec(agentNs, 'renice', ['-n', '0', '-p', String(agent.pid)]);
  const normal = await priority();
  assert.equal(normal?.status, 'warn', JSON.stringify(normal));
  assert.match(normal.detail, /event loop at nice 0, .*started outside the shipped unit/);
  assert.equal(normal.fix, `systemctl restart rackside (the unit sets Nice=-5), or for this run: renice -n -5 -p ${String(agent.pid)}`);

  // The fix's second half, as printed: the event loop only — the bulk threads keep their own value.
  const [command, ...args] = (normal.fix.split(', or for this run: ')[1] ?? '').split(' ');
  await lab.exec(agentNs, command ?? 'renice', args);
  assert.equal((await priority())?.status, 'ok');
});
