/**
 * @module The network and files of a PXE storm. Two namespaces of a {@link NetnsLab} joined by
 * one veth pair: the server namespace (`eth0` = 10.88.0.1/16, where rackside or
 * dnsmasq + nginx run) and one client namespace shared by every simulated client. The client
 * `eth0` has no address — firmware sends DHCP from 0.0.0.0, so it gets a route for the limited
 * broadcast — plus a route to the server's /16 and an AnyIP route (`ip route add local
 * 10.88.64.0/18 dev lo`): every address of the DHCP pool is local in the client namespace, so
 * each client binds its TFTP and HTTP sockets to its own leased address without an `ip addr
 * add` per client, and the kernel answers the server's ARP for any of them (the route makes
 * the target RTN_LOCAL; arp_ignore 0). The pool (10.88.64.1–10.88.127.254, 16 382 addresses)
 * stays clear of the server's address, which must not be local to the clients.
 *
 * The boot files are random bytes (1 MiB first stage, 10 MiB kernel, 50 MiB initrd by default)
 * written once under the lab's scratch directory, world-readable (nginx's workers run as
 * nobody), and shared by every server of the run through hard links.
 */
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { NetnsLab } from '../../helpers/netns.js';

/** Addresses of the storm network (inside its namespaces, so the same every run). */
export const STORM_NETWORK = {
  serverAddress: '10.88.0.1',
  prefixLength: 16,
  serverNetwork: '10.88.0.0/16',
  netmask: '255.255.0.0',
  poolFirst: '10.88.64.1',
  poolLast: '10.88.127.254',
  /** The AnyIP route of the client namespace: covers the pool, not the server. */
  clientLocalRoute: '10.88.64.0/18',
  httpPort: 8081,
} as const;

/**
 * TCP congestion control of the storm's connections, set on the routes between the namespaces
 * (`ip route … congctl`: the namespace default can only be set to the host's allowed list, and a
 * new namespace inherits the host's default): Debian's default, `cubic`, whatever the host runs —
 * or `host` to keep the host's. With BBR (v1, as a host may set it) a storm showed one client's initrd crawling at
 * ~2 KB/s for 80–180 s: the simulated clients share one process that cannot read 500
 * connections as fast as they arrive, their receive queues fill, the kernel drops the
 * out-of-order segments that veth's per-CPU queues produce (receive pruning, SACK reneging),
 * and BBR reads that steady loss at a low rate as a token-bucket policer — it then paces at its
 * long-term bandwidth sample (`bbr:(bw:15880bps …)` in `ss -ti`) for 48 round trips, each of
 * them slow at that rate. dnsmasq+nginx are exposed alike; the lab pins one choice for both.
 */
export const STORM_CONGESTION_CONTROL = 'cubic';

/** Sizes of the boot files, bytes. */
export interface BootFileSizes {
  firstStage: number;
  kernel: number;
  initrd: number;
}

/** The sizes: 1 MiB first stage, 10 MiB kernel, 50 MiB initrd. */
export const DEFAULT_BOOT_FILE_SIZES: Readonly<BootFileSizes> = { firstStage: 1 << 20, kernel: 10 << 20, initrd: 50 << 20 };

/** Paths of the boot files. */
export interface BootFiles {
  sizes: BootFileSizes;
  firstStage: string;
  kernel: string;
  initrd: string;
}

/** A storm lab: its namespaces, its scratch directory and its files. */
export interface StormLab {
  readonly lab: NetnsLab;
  readonly serverNs: string;
  readonly clientNs: string;
  /** Scratch directory (mode 0755), removed at teardown. */
  readonly dir: string;
  readonly files: BootFiles;
  /** Kills everything in the namespaces, deletes them and the scratch directory. */
  teardown(): Promise<void>;
}

async function writeRandomFile(path: string, bytes: number): Promise<void> {
  const file = await open(path, 'w', 0o644);
  try {
    for (let left = bytes; left > 0;) {
      const chunk = randomBytes(Math.min(left, 1 << 20));
      await file.write(chunk);
      left -= chunk.length;
    }
  } finally {
    await file.close();
  }
}

/** Hard-links `from` to `to` (same file system: the lab's scratch directory), creating `to`'s directory. */
export async function linkFile(from: string, to: string): Promise<void> {
  await mkdir(join(to, '..'), { recursive: true, mode: 0o755 });
  await rm(to, { force: true });
  await link(from, to);
}

/**
 * Creates the namespaces, the veth pair, the routes and the files (see the module comment)
 * inside `lab` (a new one from {@link NetnsLab.open} when absent) and scratch directory `dir`.
 */
export async function openStormLab(options: { dir: string; lab?: NetnsLab; sizes?: Partial<BootFileSizes>; congestionControl?: string }): Promise<StormLab> {
  const lab = options.lab ?? await NetnsLab.open();
  const n = STORM_NETWORK;
  const dir = options.dir;
  try {
    await chmod(dir, 0o755);
    const serverNs = await lab.namespace('pxesrv');
    const clientNs = await lab.namespace('pxecli');
    await lab.link(serverNs, 'eth0', clientNs, 'eth0', { a: `${n.serverAddress}/${n.prefixLength}` });
    const congestion = options.congestionControl ?? STORM_CONGESTION_CONTROL;
    const congctl = congestion === 'host' ? [] : ['congctl', congestion];
    if (congctl.length > 0) {
      await lab.exec(serverNs, 'ip', ['route', 'replace', n.serverNetwork, 'dev', 'eth0', 'proto', 'kernel', 'scope', 'link', 'src', n.serverAddress, ...congctl]);
    }
    for (const route of [
      ['route', 'add', '255.255.255.255/32', 'dev', 'eth0'],
      ['route', 'add', n.serverNetwork, 'dev', 'eth0', ...congctl],
      ['route', 'add', 'local', n.clientLocalRoute, 'dev', 'lo'],
    ]) await lab.exec(clientNs, 'ip', route);
    const sizes = { ...DEFAULT_BOOT_FILE_SIZES, ...options.sizes };
    const filesDir = join(dir, 'files');
    await mkdir(filesDir, { mode: 0o755 });
    const files: BootFiles = { sizes, firstStage: join(filesDir, 'first-stage.efi'), kernel: join(filesDir, 'vmlinuz'), initrd: join(filesDir, 'initrd') };
    await writeRandomFile(files.firstStage, sizes.firstStage);
    await writeRandomFile(files.kernel, sizes.kernel);
    await writeRandomFile(files.initrd, sizes.initrd);
    return {
      lab, serverNs, clientNs, dir, files,
      async teardown() {
        try {
          await lab.teardown();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    if (options.lab === undefined) await lab.teardown().catch(() => undefined);
    throw err;
  }
}
