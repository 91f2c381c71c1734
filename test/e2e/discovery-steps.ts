/**
 * @module Steps of the discovery end-to-end test (discovery.test.ts): the agent config with
 * discovery and in-band enlistment on, ipmitool over lanplus inside the rack's namespace (where
 * ipmi_sim listens), finding the host rackside discovered, reading the BMC password off the
 * guest's KCS wire, the byte search of everything rackside shows for that password, and a
 * switch port on the rack bridge that speaks LLDP (Debian's lldpd).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { BareMetalHost } from '../../agent/host/types.js';
import type { StoredEvent } from '../../agent/store/types.js';
import { runCommand, trackProcess, type ExecResult } from '../helpers/netns.js';
import { renderAgentConfig } from '../lab/rack/rack-config.js';
import type { RackHost, VirtualRack } from '../lab/virtual-rack.js';
import { getJson, tail } from './provision-steps.js';

/** The rack's agent config with `dhcp.unknownHosts: discover` and `discovery.enrollBMC: true`. */
export function discoveryAgentConfig(paths: { stateDir: string; cacheDir: string }): string {
  // LLDP on (the rack's default turns it off): a switch port on br0 speaks it in this test.
  const base = renderAgentConfig({ ...paths, logLevel: 'info', ramdiskKernelParams: 'no_timer_check' });
  assert.ok(base.includes('dhcp:\n  mode: full\n'), 'the rack config has a dhcp section');
  return `${base.replace('dhcp:\n  mode: full\n', 'dhcp:\n  mode: full\n  unknownHosts: discover\n')}discovery:\n  enrollBMC: true\n  approve: auto\n`;
}

/** An IPMI user as ipmitool names it. */
export interface IpmiLogin {
  username: string;
  password: string;
}

/** `ipmitool -I lanplus -C 3 … ARGS` against the host's ipmi_sim, inside the rack's namespace; never throws for an exit code. */
export function rackIpmitool(rack: VirtualRack, host: RackHost, login: IpmiLogin, args: readonly string[]): Promise<ExecResult> {
  return runCommand('ip', [
    'netns', 'exec', rack.namespace, 'ipmitool', '-I', 'lanplus', '-C', '3', '-N', '1', '-R', '3',
    '-H', '127.0.0.1', '-p', String(host.ipmi?.port ?? 623), '-U', login.username, '-P', login.password, ...args,
  ], { allowFailure: true, timeoutMs: 30_000 });
}

/** Like {@link rackIpmitool}; fails the test unless ipmitool exits 0; returns stdout. */
export async function mustIpmitool(rack: VirtualRack, host: RackHost, login: IpmiLogin, args: readonly string[]): Promise<string> {
  const r = await rackIpmitool(rack, host, login, args);
  assert.equal(r.code, 0, `ipmitool ${args.join(' ')} as ${login.username}: ${r.stderr.trim()} ${r.stdout.trim()}`);
  return r.stdout;
}

/** The hosts the agent lists. */
export async function listHosts(rack: VirtualRack): Promise<BareMetalHost[]> {
  return (await getJson<{ items: BareMetalHost[] }>(rack, '/api/v1/hosts')).items;
}

/** The host's evidence for a failure message: serial console and agent log tails. */
async function evidence(rack: VirtualRack, host: RackHost): Promise<string> {
  const agentLog = await readFile(rack.agent.logFile, 'utf8').catch(() => '');
  return `--- serial log (tail)\n${tail(await host.serialLog(), 40)}\n--- agent log (tail)\n${tail(agentLog, 40)}`;
}

/** Fails at once when the guest's kernel panicked (it would never call back). */
async function assertNoPanic(host: RackHost): Promise<void> {
  const serial = await host.serialLog();
  const panic = serial.lastIndexOf('Kernel panic - not syncing');
  if (panic >= 0) assert.fail(`the guest's kernel panicked:\n${serial.slice(panic, panic + 400)}`);
}

/**
 * Polls the host list until `pick` finds a host, within `deadlineMs`; errors on the way are
 * diagnostics (registration and power errors are retried with backoff, as upstream does).
 */
export async function waitForHost(
  t: TestContext, rack: VirtualRack, host: RackHost, what: string, deadlineMs: number, pick: (hosts: BareMetalHost[]) => BareMetalHost | undefined,
): Promise<BareMetalHost> {
  const started = Date.now();
  const errors = new Set<string>();
  let last: BareMetalHost | undefined;
  while (Date.now() - started < deadlineMs) {
    const hosts = await listHosts(rack);
    const found = pick(hosts);
    if (found !== undefined) return found;
    last = hosts.find((h) => h.spec.bootMACAddress === host.spec.mac);
    const error = last?.status.errorMessage ?? '';
    if (error !== '' && !errors.has(error)) {
      errors.add(error);
      t.diagnostic(`${last?.metadata.name ?? '?'} in ${last?.status.provisioning.state ?? '?'}: ${error} (retried)`);
    }
    await assertNoPanic(host);
    await new Promise((r) => setTimeout(r, 1000));
  }
  return assert.fail(`${what} within ${deadlineMs / 1000} s: last ${JSON.stringify(last?.status.provisioning ?? null)}\n${await evidence(rack, host)}`);
}

/**
 * The password the guest set on its BMC, read off the KCS wire: QEMU's chardev log holds every
 * byte the guest sent, and ipmi_sim's VM codec frames requests unescaped for letters and digits.
 * A Set User Password request (IPMI 2.0 §22.30: NetFn App, cmd 0x47; data: user ID with bit 7
 * clear for a 16-byte password, operation 0x02 "set password", the 16 password bytes).
 */
export function passwordFromKcsLog(log: Buffer, userId: number): string {
  const text = log.toString('latin1');
  const pattern = new RegExp(`\\x47${String.fromCharCode(userId).replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}\\x02([A-Za-z0-9]{16})`, 'g');
  const found = [...text.matchAll(pattern)].map((m) => m[1] ?? '');
  assert.equal(found.length, 1, `one Set User Password for user ${userId} on the KCS wire (found ${found.length})`);
  return found[0] ?? '';
}

/** Management API paths whose answers must not hold the password (the timelines hold the flight recorder's entries). */
export function exposedPaths(name: string, mac: string): string[] {
  return [
    '/api/v1/hosts', `/api/v1/hosts/${name}`, `/api/v1/hosts/${name}/events`, `/api/v1/hosts/${name}/timeline?limit=10000`, `/api/v1/boot/${mac}/timeline?limit=10000`,
    '/api/v1/events', '/api/v1/secrets', '/metrics', '/',
  ];
}

/** Fails when `secret` (as bytes, or base64) is in the agent's log, its output or an answer of `paths`. */
export async function assertSecretNowhere(rack: VirtualRack, secret: string, paths: readonly string[]): Promise<number> {
  const needles = [Buffer.from(secret), Buffer.from(Buffer.from(secret).toString('base64'))];
  const sources: [string, Buffer][] = [
    ['agent log', await readFile(rack.agent.logFile)],
    ['agent output', Buffer.from(rack.agent.output())],
  ];
  for (const path of paths) {
    const res = await fetch(`${rack.managementUrl}${path}`);
    assert.equal(res.status, 200, `GET ${path}`);
    sources.push([`GET ${path}`, Buffer.from(await res.arrayBuffer())]);
  }
  for (const [where, bytes] of sources) {
    for (const needle of needles) assert.equal(bytes.indexOf(needle), -1, `the BMC password is not in the ${where}`);
  }
  return sources.reduce((n, [, b]) => n + b.length, 0);
}

/** The host's timeline items (oldest first). */
export async function hostTimeline(rack: VirtualRack, name: string): Promise<StoredEvent[]> {
  return (await getJson<{ items: StoredEvent[] }>(rack, `/api/v1/hosts/${name}/timeline?limit=500`)).items;
}

/** Time of the first timeline item matching `match`, as epoch ms; fails naming `what` when none. */
export function timeOf(items: readonly StoredEvent[], what: string, match: (e: StoredEvent) => boolean): number {
  const item = items.find(match);
  assert.ok(item !== undefined, `${what} in the timeline: ${JSON.stringify(items.map((e) => `${e.reason} ${e.message}`).slice(-30))}`);
  return Date.parse(item.time);
}

/** The rack's switch port as LLDP names it. */
export interface RackSwitchPort {
  systemName: string;
  /** lldpd's port ID: the MAC of its interface (subtype 3). */
  portId: string;
  stop(): Promise<void>;
}

/**
 * A switch port on the rack bridge that speaks LLDP: a veth pair in the rack's namespace, one end
 * a port of br0, lldpd on the other (it needs an address there to send), and br0 forwarding the
 * nearest-bridge group address 01-80-C2-00-00-0E (IEEE 802.1AB §7.1), which a Linux bridge
 * keeps to itself unless bit 14 of group_fwd_mask is set. lldpd is stopped by PID.
 */
export async function startRackSwitchPort(rack: VirtualRack, systemName: string): Promise<RackSwitchPort> {
  const ip = (args: string[]): Promise<ExecResult> => runCommand('ip', ['-n', rack.namespace, ...args]);
  await ip(['link', 'add', 'lldpsw', 'type', 'veth', 'peer', 'name', 'lldpport']);
  await ip(['link', 'set', 'lldpport', 'master', 'br0', 'up']);
  await ip(['link', 'set', 'lldpsw', 'up']);
  await ip(['addr', 'add', '10.250.1.1/24', 'dev', 'lldpsw']);
  await ip(['link', 'set', 'br0', 'type', 'bridge', 'group_fwd_mask', '0x4000']);
  const portId = /"address":"([0-9a-f:]{17})"/.exec((await ip(['-j', 'link', 'show', 'lldpsw'])).stdout)?.[1];
  assert.ok(portId !== undefined, 'the switch port has a MAC');
  const dir = await mkdtemp(join(tmpdir(), 'rackside-e2e-lldpd-'));
  await chmod(dir, 0o755); // lldpd's unprivileged half (user _lldpd) opens its control socket here
  const config = join(dir, 'lldpd.conf');
  await writeFile(config, `configure system hostname ${systemName}\n`);
  const child = spawn('ip', ['netns', 'exec', rack.namespace, 'lldpd', '-d', '-I', 'lldpsw', '-u', join(dir, 'lldpd.socket'), '-O', config, '-m', '10.250.1.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lldpd = trackProcess(child);
  return {
    systemName, portId,
    stop: async () => {
      await lldpd.stop('SIGTERM', 2000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
