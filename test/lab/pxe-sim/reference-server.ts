/**
 * @module The reference boot server of a storm: dnsmasq for DHCP and TFTP plus nginx for HTTP,
 * in the server namespace, serving the same files at the same addresses as rackside. dnsmasq
 * (`--no-daemon`, its own config file, logging to a file): `dhcp-range` over the storm pool,
 * `no-ping` (otherwise each new address is probed for ~3 s first, docs/test-peers.md), `dhcp-authoritative`,
 * `enable-tftp` with `tftp-max` raised from its default of 50 concurrent transfers to the
 * client count, and the classic iPXE chain by tags: `dhcp-userclass=set:ipxe,iPXE` gets the
 * script URL, other clients get `ipxe.efi` (option 93 = 7) or `undionly.kpxe` by `dhcp-boot`.
 * nginx (`daemon off`, `sendfile on`, `tcp_nopush on`, keep-alive, no access log,
 * `worker_processes` 1 or `auto`) serves `/boot.ipxe` — one static script naming
 * `/ramdisk/vmlinuz` and `/ramdisk/initrd` (dnsmasq cannot render a script per host) — and the
 * two images. Both are stopped by PID.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor, type LabProcess, type NetnsLab } from '../../helpers/netns.js';
import { processCpuSeconds, type BootServer } from './boot-server.js';
import { linkFile, STORM_NETWORK, type BootFiles } from './storm-lab.js';

/** Options of {@link startReferenceServer}. */
export interface ReferenceServerOptions {
  lab: NetnsLab;
  ns: string;
  /** A fresh directory for this server (configs, TFTP and HTTP roots, leases, logs). */
  dir: string;
  files: BootFiles;
  /** Expected concurrent clients (sizes dnsmasq's `tftp-max`). */
  clients: number;
  /** nginx `worker_processes`: 1 (default, like rackside's one process) or `auto` (one per core, its stock config). */
  nginxWorkers?: 1 | 'auto';
}

/** The iPXE script nginx serves to every client. */
export function referenceScript(baseUrl: string): string {
  return ['#!ipxe', `kernel --name vmlinuz ${baseUrl}/ramdisk/vmlinuz initrd=initrd console=ttyS0,115200`, `initrd --name initrd ${baseUrl}/ramdisk/initrd`, 'boot', ''].join('\n');
}

function dnsmasqConfig(dir: string, tftpRoot: string, clients: number, scriptUrl: string): string {
  const n = STORM_NETWORK;
  return [
    'port=0', 'interface=eth0', 'bind-interfaces', 'no-resolv', 'no-hosts',
    `dhcp-range=${n.poolFirst},${n.poolLast},${n.netmask},1h`,
    'no-ping', 'dhcp-authoritative', 'dhcp-lease-max=100000',
    `dhcp-leasefile=${join(dir, 'dnsmasq.leases')}`,
    'enable-tftp', `tftp-root=${tftpRoot}`, `tftp-max=${Math.max(50, clients * 2)}`,
    'dhcp-userclass=set:ipxe,iPXE',
    'dhcp-match=set:efi64,option:client-arch,7',
    `dhcp-boot=tag:ipxe,${scriptUrl}`,
    'dhcp-boot=tag:!ipxe,tag:efi64,ipxe.efi',
    'dhcp-boot=tag:!ipxe,tag:!efi64,undionly.kpxe',
    `log-facility=${join(dir, 'dnsmasq.log')}`,
    `pid-file=${join(dir, 'dnsmasq.pid')}`,
    'user=root', 'group=root', '',
  ].join('\n');
}

function nginxConfig(dir: string, root: string, workers: 1 | 'auto'): string {
  const n = STORM_NETWORK;
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(dir, `nginx-${t}`)};`).join('\n');
  return `worker_processes ${String(workers)};
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'nginx-error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000;
  default_type application/octet-stream;
${temp}
  server {
    listen ${n.serverAddress}:${n.httpPort};
    root ${root};
  }
}
`;
}

/** Starts dnsmasq and nginx (see the module comment); stops what it started on failure. */
export async function startReferenceServer(o: ReferenceServerOptions): Promise<BootServer> {
  const { lab, ns, dir, files } = o;
  const workers = o.nginxWorkers ?? 1;
  const procs: LabProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map((p) => p.stop('SIGTERM', 5000)));
  };
  try {
    const tftpRoot = join(dir, 'tftp');
    const httpRoot = join(dir, 'http');
    for (const name of ['ipxe.efi', 'snponly.efi', 'undionly.kpxe']) await linkFile(files.firstStage, join(tftpRoot, name));
    await linkFile(files.kernel, join(httpRoot, 'ramdisk', 'vmlinuz'));
    await linkFile(files.initrd, join(httpRoot, 'ramdisk', 'initrd'));
    const baseUrl = `http://${STORM_NETWORK.serverAddress}:${STORM_NETWORK.httpPort}`;
    await writeFile(join(httpRoot, 'boot.ipxe'), referenceScript(baseUrl), { mode: 0o644 });
    await writeFile(join(dir, 'nginx.conf'), nginxConfig(dir, httpRoot, workers));
    const nginx = lab.spawn(ns, 'nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir, '-g', 'daemon off;']);
    procs.push(nginx);
    // nginx writes its pid file after it has bound its listening sockets.
    await waitFor(async () => {
      if (nginx.child.exitCode !== null) throw new Error(`nginx exited: ${nginx.stderr()}`);
      return (await readFile(join(dir, 'nginx.pid'), 'utf8').catch(() => '')).trim() !== '';
    }, 'nginx to start', 10_000);
    await writeFile(join(dir, 'dnsmasq.conf'), dnsmasqConfig(dir, tftpRoot, o.clients, `${baseUrl}/boot.ipxe`));
    const dnsmasq = lab.spawn(ns, 'dnsmasq', ['--no-daemon', `--conf-file=${join(dir, 'dnsmasq.conf')}`]);
    procs.push(dnsmasq);
    await waitFor(async () => {
      if (dnsmasq.child.exitCode !== null) throw new Error(`dnsmasq exited: ${dnsmasq.stderr()}`);
      const log = await readFile(join(dir, 'dnsmasq.log'), 'utf8').catch(() => '');
      return /DHCP, IP range/.test(log) && /TFTP root is/.test(log);
    }, 'dnsmasq to start', 10_000);
    return {
      name: `dnsmasq+nginx(${String(workers)})`,
      description: `dnsmasq pid ${dnsmasq.pid} (DHCP + TFTP, tftp-max ${Math.max(50, o.clients * 2)}), nginx pid ${nginx.pid} (worker_processes ${String(workers)}, sendfile)`,
      cpuSeconds: () => processCpuSeconds(dnsmasq.pid) + processCpuSeconds(nginx.pid, true),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
