/**
 * @module Real DHCP clients for integration tests, run inside lab namespaces (docs/test-peers.md,
 * "DHCP clients"): ISC `dhclient` and busybox `udhcpc`, each with a hook script that writes
 * the variables it was given to a file — the lease as the client understood it. Also the
 * in-namespace test client (`dhcp-test-client.js`) for exchanges no packaged client does.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor, type NetnsLab } from './netns.js';

/** The variables a client passed its hook for one lease (`new_ip_address`, `ip`, `boot_file` …). */
export type HookEnvironment = Record<string, string>;

/** The compiled in-namespace test client. */
export const DHCP_TEST_CLIENT = join(dirname(fileURLToPath(import.meta.url)), 'dhcp-test-client.js');

function parseEnv(text: string): HookEnvironment {
  const env: HookEnvironment = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

/** Writes a hook that records its environment in `<dir>/<name>-<reason>.env` (hooks run with an empty PATH). */
async function writeHook(dir: string, name: string, reasonExpression: string): Promise<string> {
  const hook = join(dir, `${name}-hook.sh`);
  await writeFile(hook, `#!/bin/sh\n/usr/bin/env > "${dir}/${name}-${reasonExpression}.env"\nexit 0\n`);
  await chmod(hook, 0o755);
  return hook;
}

/**
 * Runs ISC dhclient once on `ifname` in `ns` (`-d -1` with its own lease, pid and config files
 * in `dir`) until its hook reports BOUND; stops it and returns what the hook saw. `fresh`
 * (default true) starts from an empty lease file, so the client DISCOVERs instead of INIT-REBOOTing.
 */
export async function runDhclient(
  lab: NetnsLab,
  ns: string,
  dir: string,
  options: { ifname?: string; vendorClass?: string; fresh?: boolean; timeoutMs?: number } = {},
): Promise<HookEnvironment> {
  const hook = await writeHook(dir, 'dhclient', '$reason');
  const leaseFile = join(dir, 'dhclient.leases');
  if (options.fresh !== false) await writeFile(leaseFile, '');
  const conf = join(dir, 'dhclient.conf');
  const lines = ['request subnet-mask, routers, domain-name-servers, tftp-server-name, bootfile-name;'];
  if (options.vendorClass !== undefined) lines.push(`send vendor-class-identifier "${options.vendorClass}";`);
  await writeFile(conf, `${lines.join('\n')}\n`);
  const bound = join(dir, 'dhclient-BOUND.env');
  const reboot = join(dir, 'dhclient-REBOOT.env');
  await writeFile(bound, '');
  await writeFile(reboot, '');
  const p = lab.spawn(ns, 'dhclient', ['-4', '-d', '-1', '-v', '-sf', hook, '-lf', leaseFile, '-pf', join(dir, 'dhclient.pid'), '-cf', conf, options.ifname ?? 'eth0']);
  try {
    const text = await waitFor(
      async () => {
        for (const file of [bound, reboot]) {
          const t = await readFile(file, 'utf8');
          if (t.includes('new_ip_address=')) return t;
        }
        if (p.child.exitCode !== null) throw new Error(`dhclient exited ${p.child.exitCode}: ${p.stderr()}`);
        return undefined;
      },
      'dhclient to bind',
      options.timeoutMs ?? 30_000,
    );
    return parseEnv(text);
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\ndhclient output:\n${p.stderr()}`);
  } finally {
    await p.stop('SIGTERM', 2000);
  }
}

/**
 * Runs busybox udhcpc once (`-f -q -n`: foreground, quit after a lease, exit 1 without one) on
 * `ifname` in `ns`, asking for options 66 and 67; resolves with the hook's `bound` environment,
 * or `undefined` when no lease was obtained within `tries` × `timeoutSeconds`.
 */
export async function runUdhcpc(
  lab: NetnsLab,
  ns: string,
  dir: string,
  options: { ifname?: string; vendorClass?: string; tries?: number; timeoutSeconds?: number; broadcast?: boolean } = {},
): Promise<HookEnvironment | undefined> {
  const hook = await writeHook(dir, 'udhcpc', '$1');
  const bound = join(dir, 'udhcpc-bound.env');
  await writeFile(bound, '');
  const args = ['-i', options.ifname ?? 'eth0', '-f', '-q', '-n', '-t', String(options.tries ?? 5), '-T', String(options.timeoutSeconds ?? 2), '-s', hook, '-O', 'tftp', '-O', 'bootfile'];
  if (options.vendorClass !== undefined) args.push('-V', options.vendorClass);
  if (options.broadcast === true) args.push('-B');
  const result = await lab.exec(ns, 'udhcpc', args, { allowFailure: true, timeoutMs: 60_000 });
  const text = await readFile(bound, 'utf8');
  if (result.code !== 0 || !text.includes('ip=')) return undefined;
  return parseEnv(text);
}
