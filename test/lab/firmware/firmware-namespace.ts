/**
 * @module The firmware lab's network namespace, one per test run, named
 * `<prefix><pid>n<counter>` with a prefix each test file chooses (`fwpxe`, `fwhttp` …), so
 * parallel runs and the other labs never collide and teardown removes exactly this namespace:
 * whatever still runs inside it is killed by PID, then the namespace is deleted, taking the
 * bridge and the tap along. Inside: loopback up, IPv6 off, bridge `br0` (no STP, no forwarding
 * delay — firmware DHCP gives up quickly) with rackside's address, one tap for the guest. The
 * root namespace is never touched.
 */
import { spawnSync } from 'node:child_process';
import { runCommand } from '../../helpers/netns.js';

let counter = 0;

/** A lab namespace. */
export interface FirmwareNamespace {
  name: string;
  /** Adds tap `tap` to br0 (up). */
  addTap(tap: string): Promise<void>;
  /** Kills what runs inside (SIGKILL by PID), deletes the namespace; idempotent. */
  remove(): Promise<void>;
  /** The same, synchronously, for process exit. */
  removeSync(): void;
}

function pidsIn(stdout: string): number[] {
  return stdout.split(/\s+/).filter((s) => /^\d+$/.test(s)).map(Number);
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** Creates namespace `<prefix><pid>n<counter>` with br0 addressed `address` (CIDR). */
export async function createFirmwareNamespace(prefix: string, address: string): Promise<FirmwareNamespace> {
  if (!/^[a-z][a-z0-9]{0,11}$/.test(prefix)) throw new RangeError(`namespace prefix ${JSON.stringify(prefix)}: 1-12 lower-case letters and digits`);
  const name = `${prefix}${process.pid}n${++counter}`;
  const added = await runCommand('ip', ['netns', 'add', name], { allowFailure: true });
  if (added.code !== 0) throw new Error(`cannot create network namespace ${name}: ${added.stderr.trim()} (needs root)`);
  let removed: Promise<void> | undefined;
  const ns: FirmwareNamespace = {
    name,
    addTap: async (tap) => {
      await runCommand('ip', ['-n', name, 'tuntap', 'add', 'dev', tap, 'mode', 'tap']);
      await runCommand('ip', ['-n', name, 'link', 'set', tap, 'master', 'br0', 'up']);
    },
    remove: () => (removed ??= (async () => {
      killAll(pidsIn((await runCommand('ip', ['netns', 'pids', name], { allowFailure: true })).stdout));
      const deleted = await runCommand('ip', ['netns', 'del', name], { allowFailure: true });
      if (deleted.code !== 0 && !/No such file/.test(deleted.stderr)) throw new Error(`ip netns del ${name}: ${deleted.stderr.trim()}`);
    })()),
    removeSync: () => {
      killAll(pidsIn(spawnSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).stdout));
      spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    },
  };
  try {
    await runCommand('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
    await runCommand('ip', ['netns', 'exec', name, 'sh', '-c', 'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6']);
    await runCommand('ip', ['-n', name, 'link', 'add', 'br0', 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0']);
    await runCommand('ip', ['-n', name, 'addr', 'add', address, 'dev', 'br0']);
    await runCommand('ip', ['-n', name, 'link', 'set', 'br0', 'up']);
  } catch (err) {
    await ns.remove().catch(() => undefined);
    throw err;
  }
  return ns;
}
