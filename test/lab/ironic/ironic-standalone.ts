/**
 * @module Runs OpenStack Ironic (Debian `ironic-api ironic-conductor python3-ironic`, 21.4) standalone
 * for benchmarks: sqlite database (`ironic-dbsync create_schema`), `auth_strategy = noauth`,
 * `rpc_transport = none` (API and conductor in the one `ironic` process), hardware type `ipmi`
 * with the `ipmitool` power interface and `noop` management, API on 127.0.0.1. Started and
 * stopped by PID (with its descendants); the scratch directory is removed on stop.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { childrenOf } from '../../helpers/agent-process.js';

/** A running standalone Ironic. */
export interface Ironic {
  readonly url: string;
  readonly pid: number;
  readonly dir: string;
  /** Sends one request with the latest microversion; resolves with the status and parsed body. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
  /** Stops the process and its descendants by PID, removes the scratch directory; idempotent. */
  stop(): Promise<void>;
}

/** True when the `ironic` single-process command and `ironic-dbsync` are on PATH. */
export function hasIronic(): boolean {
  return spawnSync('sh', ['-c', 'command -v ironic && command -v ironic-dbsync']).status === 0;
}

/** Text of ironic.conf for a standalone, noauth, single-process Ironic. */
export function renderIronicConf(dir: string, port: number): string {
  return [
    '[DEFAULT]', 'auth_strategy = noauth', 'rpc_transport = none', 'host = bench',
    'enabled_hardware_types = ipmi', 'enabled_power_interfaces = ipmitool', 'enabled_management_interfaces = noop',
    'enabled_boot_interfaces = pxe', 'enabled_deploy_interfaces = ramdisk', 'enabled_inspect_interfaces = no-inspect',
    'enabled_console_interfaces = no-console', 'enabled_raid_interfaces = no-raid', 'enabled_rescue_interfaces = no-rescue',
    'enabled_vendor_interfaces = no-vendor', 'enabled_bios_interfaces = no-bios', 'enabled_network_interfaces = noop',
    `log_dir = ${dir}`, `tempdir = ${dir}`,
    '[api]', 'host_ip = 127.0.0.1', `port = ${String(port)}`, 'api_workers = 1',
    '[database]', `connection = sqlite:///${join(dir, 'ironic.sqlite')}`,
    '[dhcp]', 'dhcp_provider = none',
    '[oslo_concurrency]', `lock_path = ${join(dir, 'locks')}`,
    '',
  ].join('\n');
}

/** Starts Ironic on `port` and waits (≤ `timeoutMs`) until `GET /v1/drivers` lists `ipmi`. */
export async function startIronic(port: number, timeoutMs = 180_000): Promise<Ironic> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-ironic-'));
  const conf = join(dir, 'ironic.conf');
  await writeFile(conf, renderIronicConf(dir, port));
  let child: ChildProcess | undefined;
  const url = `http://127.0.0.1:${String(port)}`;
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c?.pid !== undefined && c.exitCode === null && c.signalCode === null) {
      const all = [...childrenOf(c.pid), c.pid];
      for (const pid of all) { try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ } }
      const exited = (): boolean => c.exitCode !== null || c.signalCode !== null;
      for (let i = 0; i < 50 && !exited(); i++) await sleep(100);
      for (const pid of all) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    }
    await rm(dir, { recursive: true, force: true });
  };
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    const res = await fetch(`${url}${path}`, {
      method, headers: { 'content-type': 'application/json', 'x-openstack-ironic-api-version': 'latest' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? undefined : JSON.parse(text) as unknown };
  };
  try {
    const sync = spawnSync('ironic-dbsync', ['--config-file', conf, 'create_schema'], { encoding: 'utf8', timeout: 120_000 });
    if (sync.status !== 0) throw new Error(`ironic-dbsync failed: ${sync.stderr.slice(-2000)}`);
    const log = openSync(join(dir, 'ironic.out'), 'a');
    child = spawn('ironic', ['--config-file', conf], { stdio: ['ignore', log, log], cwd: dir });
    closeSync(log);
    const pid = child.pid;
    if (pid === undefined) throw new Error('ironic did not start');
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`ironic exited with ${String(child.exitCode)}`);
      const drivers = await call('GET', '/v1/drivers').catch(() => undefined);
      if (drivers?.status === 200 && JSON.stringify(drivers.json).includes('"ipmi"')) break;
      if (performance.now() > deadline) throw new Error(`ironic not ready within ${String(timeoutMs)} ms`);
      await sleep(250);
    }
    return { url, pid, dir, call, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
