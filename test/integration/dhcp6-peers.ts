/**
 * Helpers of the DHCPv6 integration tests: IPv6 switched on in a lab namespace (DAD off), the
 * DHCPv6 server child (`dhcp6-child.ts`) with its stdout lines, and one run of ISC `dhclient -6`
 * until its hook sees BOUND6.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitFor, type LabProcess, type NetnsLab } from '../helpers/netns.js';
import type { Dhcp6ChildConfig } from './dhcp6-child.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'dhcp6-child.js');
const TFTP_CHILD = join(dirname(fileURLToPath(import.meta.url)), 'tftp-server-child.js');

/** Switches IPv6 on in `ns` (and on `ifnames` there), with DAD off. */
export async function enableIpv6(lab: NetnsLab, ns: string, ifnames: readonly string[]): Promise<void> {
  const keys = ['all', 'default', ...ifnames];
  await lab.sysctl(ns, Object.fromEntries(keys.map((k) => [`net.ipv6.conf.${k}.accept_dad`, '0'])));
  await lab.sysctl(ns, Object.fromEntries(keys.map((k) => [`net.ipv6.conf.${k}.disable_ipv6`, '0'])));
}

/** One stdout line of the server child. */
export interface ChildLine {
  type: string;
  leases?: { mac: string; address: string; state: string }[];
  stats?: Record<string, unknown>;
  message?: string;
}

/** The server child, with its stdout lines collected. */
export async function startChild(lab: NetnsLab, ns: string, config: Dhcp6ChildConfig): Promise<{ p: LabProcess; lines: ChildLine[]; leases: () => Promise<NonNullable<ChildLine['leases']>>; stats: () => Promise<Record<string, unknown>> }> {
  const p = lab.spawn(ns, process.execPath, [CHILD, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: ChildLine[] = [];
  const out = p.child.stdout;
  if (out === null) throw new Error('child has no stdout');
  createInterface({ input: out }).on('line', (line) => { lines.push(JSON.parse(line) as ChildLine); });
  await waitFor(() => lines.find((l) => l.type === 'ready' || l.type === 'error'), 'the DHCPv6 server to start');
  const failed = lines.find((l) => l.type === 'error');
  if (failed !== undefined) throw new Error(`DHCPv6 server failed: ${failed.message ?? ''}\n${p.stderr()}`);
  const leases = async (): Promise<NonNullable<ChildLine['leases']>> => {
    const before = lines.length;
    p.child.stdin?.write('leases\n');
    const l = await waitFor(() => lines.slice(before).find((x) => x.type === 'leases'), 'the lease table');
    return l.leases ?? [];
  };
  const stats = async (): Promise<Record<string, unknown>> => {
    const before = lines.length;
    p.child.stdin?.write('leases\n');
    const l = await waitFor(() => lines.slice(before).find((x) => x.type === 'leases'), 'the server counters');
    return l.stats ?? {};
  };
  return { p, lines, leases, stats };
}

/**
 * Runs `dhclient -6` on eth0 of `ns` (a fresh lease file in `dir`) until its hook is called with
 * `reason` (BOUND6 after Solicit…Reply; RENEW6 after a Renew, at T1); returns the hook's environment.
 */
export async function dhclient6(lab: NetnsLab, ns: string, dir: string, duidType: 'LLT' | 'LL', reason: 'BOUND6' | 'RENEW6' = 'BOUND6'): Promise<Record<string, string>> {
  const hook = join(dir, `hook-${duidType}.sh`);
  const envFile = join(dir, `${reason}-${duidType}.env`);
  await writeFile(hook, `#!/bin/sh\n[ "$reason" = ${reason} ] && /usr/bin/env > "${envFile}"\nexit 0\n`);
  await chmod(hook, 0o755);
  await writeFile(envFile, '');
  const leaseFile = join(dir, `dhclient6-${duidType}.leases`);
  await writeFile(leaseFile, '');
  const p = lab.spawn(ns, 'dhclient', ['-6', '-d', '-1', '-v', '-D', duidType, '-sf', hook, '-lf', leaseFile, '-pf', join(dir, `dhclient6-${duidType}.pid`), 'eth0']);
  try {
    const text = await waitFor(async () => {
      const t = await readFile(envFile, 'utf8');
      if (t.includes('new_ip6_address=')) return t;
      if (p.child.exitCode !== null) throw new Error(`dhclient -6 exited ${p.child.exitCode}: ${p.stderr()}`);
      return undefined;
    }, `dhclient -6 to report ${reason}`, 30_000);
    return Object.fromEntries(text.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\ndhclient output:\n${p.stderr()}`);
  } finally {
    await p.stop('SIGTERM', 2000);
  }
}


/** Runs `dhclient -6 -r` on eth0 of `ns` with the lease file of an earlier {@link dhclient6} run: it sends a Release and exits. */
export async function dhclient6Release(lab: NetnsLab, ns: string, dir: string, duidType: 'LLT' | 'LL'): Promise<void> {
  const leaseFile = join(dir, `dhclient6-${duidType}.leases`);
  const run = await lab.exec(ns, 'dhclient', ['-6', '-r', '-v', '-D', duidType, '-sf', join(dir, `hook-${duidType}.sh`), '-lf', leaseFile, '-pf', join(dir, `dhclient6-${duidType}.pid`), 'eth0'], { allowFailure: true, timeoutMs: 20_000 });
  if (run.code !== 0) throw new Error(`dhclient -6 -r exited ${String(run.code)}: ${run.stderr}`);
}

/**
 * The recording HTTP server of {@link ipv6BootLab}: one JSON line per request (path, client
 * address); `/boot/<name>` is served from the directory in argv[1] when the file is there, anything else is a 404.
 */
const HTTP_RECORDER = `const fs=require('node:fs'),path=require('node:path');const dir=process.argv[1];require('node:http').createServer((q,s)=>{console.log(JSON.stringify({path:q.url,from:q.socket.remoteAddress}));const f=dir&&q.url.startsWith('/boot/')?path.join(dir,path.basename(q.url)):'';if(f&&fs.existsSync(f)){s.setHeader('content-length',fs.statSync(f).size);fs.createReadStream(f).pipe(s);return;}s.statusCode=404;s.end();}).listen(8081,'::',()=>console.log('{"ready":1}'));`;

/** An IPv6-only boot network in one namespace, for a QEMU guest on `tap0`. */
export interface Ipv6BootLab {
  ns: string;
  server: Awaited<ReturnType<typeof startChild>>;
  /** The recording HTTP server on `[::]:8081`. */
  http: LabProcess;
  /** Requests the HTTP server saw. */
  requests(): { path: string; from: string }[];
}

/**
 * Namespace `name` with bridge `br0` (fd00:66::1/64, IPv6 only) and `tap0` on it; the DHCPv6
 * server child's own router advertisements (`bootsvc/ra/`: fd00:66::/64 on-link, not
 * autonomous, the Managed flag, no default route, every 3–4 s); the recording HTTP server; the DHCPv6 server child on br0 (range fd00:66::100–1ff) knowing `mac` as `target`;
 * with `tftpRoot`, rackside's TFTP server on `[::]:69` serving that directory; with
 * `httpBootDir`, the HTTP server serving its files under `/boot/`.
 */
export async function ipv6BootLab(lab: NetnsLab, name: string, dir: string, mac: string, target: BootTarget, options: { tftpRoot?: string; httpBootDir?: string } = {}): Promise<Ipv6BootLab> {
  const ns = await lab.namespace(name);
  await enableIpv6(lab, ns, []);
  await lab.exec(ns, 'ip', ['link', 'add', 'br0', 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0', 'mcast_snooping', '0']);
  await lab.exec(ns, 'ip', ['tuntap', 'add', 'tap0', 'mode', 'tap']);
  await lab.exec(ns, 'ip', ['link', 'set', 'tap0', 'master', 'br0', 'up']);
  await lab.exec(ns, 'ip', ['link', 'set', 'br0', 'up']);
  await enableIpv6(lab, ns, ['br0']);
  await lab.exec(ns, 'ip', ['addr', 'add', 'fd00:66::1/64', 'dev', 'br0', 'nodad']);
  const http = lab.spawn(ns, process.execPath, ['-e', HTTP_RECORDER, ...(options.httpBootDir === undefined ? [] : [options.httpBootDir])]);
  await waitFor(() => http.stdout().includes('ready') || http.child.exitCode !== null, 'the recording HTTP server');
  const server = await startChild(lab, ns, {
    interface: 'br0', serverAddress: 'fd00:66::1', ranges: [{ subnet: 'fd00:66::/64', first: 'fd00:66::100', last: 'fd00:66::1ff' }],
    stateDir: join(dir, 'state'), targets: { [mac]: target }, routerAdvertisements: {},
  });
  if (options.tftpRoot !== undefined) {
    // rackside's TFTP server on [::]:69 (event-loop transfers: the native pump's frames are IPv4).
    const tftp = lab.spawn(ns, process.execPath, [TFTP_CHILD, JSON.stringify({ listen: { host: '::', port: 69 }, roots: [options.tftpRoot], transferThread: false, nativeSockets: false })]);
    await waitFor(() => (tftp.stdout().includes('"listening"') ? true : tftp.child.exitCode === null ? undefined : (() => { throw new Error(`TFTP server failed: ${tftp.stderr()}`); })()), 'the TFTP server');
  }
  const requests = (): { path: string; from: string }[] => http.stdout().split('\n').filter((l) => l.includes('"path"')).map((l) => JSON.parse(l) as { path: string; from: string });
  return { ns, server, http, requests };
}

/** The flight-recorder events the server child printed. */
export function childEvents(server: Awaited<ReturnType<typeof startChild>>): { detail: string; mac: string; userClass?: string; vendorClass?: string; archType?: number; bootFile?: string; address?: string }[] {
  return server.lines.filter((l) => l.type === 'event').map((l) => (l as unknown as { event: ReturnType<typeof childEvents>[number] }).event);
}
