/**
 * @module The virtual rack's one network namespace: loopback up, IPv6 off, the provisioning
 * bridge `br0` with the agent's address, and one persistent tap per guest enslaved to it (QEMU
 * opens the tap by name, so it survives an IPMI guest's power cycles, which restart QEMU). The
 * name is unique per process and rack (`rk<pid>r<n>`), so parallel runs never collide, and
 * teardown removes exactly this namespace: it kills whatever still runs inside it by PID, then
 * deletes it, which takes the bridge and the taps along. The root namespace is never touched.
 */
import { spawnSync } from 'node:child_process';
import { runCommand } from '../../helpers/netns.js';

let counter = 0;

/** The rack's namespace. */
export interface RackNamespace {
  /** Namespace name. */
  name: string;
  bridge: 'br0';
  /** Adds tap `name` to the bridge (up); returns its name. */
  addTap(name: string): Promise<string>;
  /** Kills what runs inside (SIGKILL by PID) and deletes the namespace; idempotent. */
  remove(): Promise<void>;
  /** Synchronous last resort for process exit. */
  removeSync(): void;
}

/**
 * Creates the namespace with the bridge addressed `address` (CIDR, e.g. `10.250.0.1/24`, or a
 * list). IPv6 stays off unless an address is IPv6; then it is on, duplicate address detection off.
 */
export async function createRackNamespace(address: string | readonly string[]): Promise<RackNamespace> {
  const addresses = typeof address === 'string' ? [address] : address;
  const ipv6 = addresses.some((a) => a.includes(':'));
  const name = `rk${process.pid}r${++counter}`;
  const added = await runCommand('ip', ['netns', 'add', name], { allowFailure: true });
  if (added.code !== 0) throw new Error(`cannot create network namespace ${name}: ${added.stderr.trim()} (needs root with CAP_SYS_ADMIN)`);
  let removed: Promise<void> | undefined;
  const ns: RackNamespace = {
    name,
    bridge: 'br0',
    addTap: async (tap) => {
      await runCommand('ip', ['-n', name, 'tuntap', 'add', 'dev', tap, 'mode', 'tap']);
      await runCommand('ip', ['-n', name, 'link', 'set', tap, 'master', 'br0', 'up']);
      return tap;
    },
    remove: () => (removed ??= (async () => {
      const pids = (await runCommand('ip', ['netns', 'pids', name], { allowFailure: true })).stdout.split(/\s+/).filter((s) => /^\d+$/.test(s));
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      const deleted = await runCommand('ip', ['netns', 'del', name], { allowFailure: true });
      if (deleted.code !== 0 && !/No such file/.test(deleted.stderr)) throw new Error(`ip netns del ${name}: ${deleted.stderr.trim()}`);
    })()),
    removeSync: () => {
      const pids = spawnSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).stdout.split(/\s+/).filter((s) => /^\d+$/.test(s));
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // gone
        }
      }
      spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    },
  };
  try {
    await runCommand('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
    const sysctl = ipv6 ? 'for k in all default; do echo 0 > /proc/sys/net/ipv6/conf/$k/accept_dad; echo 0 > /proc/sys/net/ipv6/conf/$k/disable_ipv6; done' : 'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6';
    await runCommand('ip', ['netns', 'exec', name, 'sh', '-c', sysctl]);
    // No STP and no forwarding delay: a port forwards the moment a guest's NIC comes up (firmware DHCP is quick to give up).
    await runCommand('ip', ['-n', name, 'link', 'add', 'br0', 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0']);
    for (const a of addresses) await runCommand('ip', ['-n', name, 'addr', 'add', a, 'dev', 'br0', ...(a.includes(':') ? ['nodad'] : [])]);
    await runCommand('ip', ['-n', name, 'link', 'set', 'br0', 'up']);
  } catch (err) {
    await ns.remove().catch(() => undefined);
    throw err;
  }
  return ns;
}
