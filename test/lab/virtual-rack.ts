/**
 * @module The virtual rack: a real rackside agent with the local provisioner, real QEMU guests
 * (TCG) and virtual BMCs on one machine, for the end-to-end tests and `npm run demo`.
 * {@link startVirtualRack} creates one network namespace (rack-namespace.ts) holding the
 * provisioning bridge and a tap per guest, and runs inside it: the agent as a child process
 * (`ip netns exec NS node dist/agent/cli.js agent --config FILE`; DHCP `full` on the bridge,
 * boot HTTP on the bridge address, the management API on the namespace's loopback), the guests
 * (QEMU on the taps; a Redfish guest starts paused — powered off — and its BMC `cont`s it, an
 * IPMI guest is started by ipmi_sim's chassis control on power on) and the IPMI simulators.
 * Redfish BMCs run in this process and are published inside the namespace through a relay
 * process (relay.ts), which also publishes the management API back out on this namespace's
 * loopback, and publishes servers of this process inside it (`publish`: e.g. a test's OS image
 * server). A Redfish guest with `virtualMedia` has an empty CD drive and a `redfish-virtualmedia`
 * BMC address; its BMC fetches InsertMedia images with curl inside the namespace, where boot
 * HTTP listens. The BareMetalHosts and their BMC Secrets are applied through the management API.
 * `stop()` kills guests, BMCs, relays and the agent by PID and deletes the namespace — on any
 * failure part-way through `startVirtualRack`, too.
 *
 * Prerequisites (checked by prerequisites.ts): root, iproute2, qemu-system-x86, ipxe-qemu,
 * openipmi for IPMI hosts, ovmf for UEFI hosts, apt for the ramdisk build, curl for virtual media;
 * qemu-system-arm and qemu-efi-aarch64 for AAVMF hosts (checked by their test: a mixed rack also
 * brings the arm64 ramdisk, `foreignRamdisks`, and the signed arm64 shim and GRUB, `bootAssets`).
 */
import { execFile, spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { copyFile, link, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trackProcess, waitFor, type LabProcess } from '../helpers/netns.js';
import { startRackIpmiBmc, type RackIpmiBmc } from './rack/ipmi-bmc.js';
import { createGuestFiles, guestPaths, guestQemuBinary, qemuArgs, validateHostSpec, writeGuestStartScript, type GuestPaths, type RackHostSpec } from './rack/qemu-guest.js';
import { createRackNamespace, type RackNamespace } from './rack/rack-namespace.js';
import { ensureRackRamdisk } from './rack/ramdisk-cache.js';
import { startRackRedfishBmc, type RackRedfishBmc } from './rack/redfish-bmc.js';
import { formatRelaySpec, startRelay, type Relay, type RelaySpec } from './rack/relay.js';
import { hostManifests, rackAddresses, renderAgentConfig, RACK_NETWORK } from './rack/rack-config.js';

export type { RackHostSpec } from './rack/qemu-guest.js';

/** Options of {@link startVirtualRack}. */
export interface VirtualRackOptions {
  hosts: RackHostSpec[];
  /** Scratch directory for everything (agent state, guests, logs); default a new one under os.tmpdir(). */
  stateDir?: string;
  /** Directory with `vmlinuz` and `initrd`; default the cached build of ramdisk-cache.ts; null: none (the agent builds it, `ramdiskBuild: 'auto'`). */
  ramdiskDir?: string | null;
  /** The agent's background ramdisk build (RACKSIDE_RAMDISK_BUILD); default `off`: the rack brings its cached build. */
  ramdiskBuild?: 'auto' | 'off';
  /** The agent's config file instead of the rack's (rack-config.ts); given the agent's state and images directories. */
  agentConfig?: (paths: { stateDir: string; cacheDir: string }) => string;
  /** Start the agent before returning (default true); false: `agent.restart()` starts it. */
  startAgent?: boolean;
  /** `spec.online` of the applied hosts (default false: a host is powered only while rackside needs it). */
  online?: boolean;
  /** Apply the hosts' BareMetalHosts and Secrets once the agent is up (default true). */
  apply?: boolean;
  /** Port of the management API on this namespace's loopback (default 0: any free port). */
  managementPort?: number;
  /**
   * The provisioning network (rack-config.ts): `ipv4` (default), `ipv6` (IPv6-only: DHCPv6 and
   * rackside's router advertisements) or `dual`. Ignored by `agentConfig`, not by the bridge.
   */
  network?: 'ipv4' | 'ipv6' | 'dual';
  /** Agent log level (default info). */
  logLevel?: 'debug' | 'info' | 'warn';
  /** Keep `stateDir` after stop (default: keep only when it was given). */
  keepFiles?: boolean;
  /** Progress lines (demo output). */
  log?: (line: string) => void;
  /**
   * Servers of this process made reachable inside the namespace: each `127.0.0.1:nsPort` there
   * relays to the unix socket `socketPath` here (e.g. an OS image server started by a test).
   */
  publish?: { nsPort: number; socketPath: string }[];
  /**
   * Ramdisks of other architectures (`vmlinuz`, `initrd` in `dir`), linked under
   * `<images>/ramdisk/<arch>/` (images/debian-arch.ts), which the agent serves by boot HTTP and TFTP.
   */
  foreignRamdisks?: { arch: 'arm64'; dir: string }[];
  /**
   * Files put in the agent's boot assets directory (`<state dir>/boot-assets`,
   * agent/boot/assets-dir.ts) at these package paths, as `dpkg-deb -x` leaves them: e.g. the
   * signed shimaa64 and GRUB that AAVMF guests (no iPXE) boot over the agent's TFTP.
   */
  bootAssets?: ReadonlyMap<string, string>;
}

/** One guest with its BMC. */
export interface RackHost {
  spec: RackHostSpec;
  tap: string;
  paths: GuestPaths;
  /** The BMC address in the applied BareMetalHost. */
  bmcAddress: string;
  redfish?: RackRedfishBmc;
  ipmi?: RackIpmiBmc;
  /** The guest's serial console so far (SeaBIOS/OVMF, iPXE, kernel, ramdisk). */
  serialLog(): Promise<string>;
  /** What the BMC did to the hardware: Redfish `METHOD PATH` requests (no GETs) and backend calls; IPMI chassis-control calls. */
  bmcCalls(): Promise<string[]>;
}

/** The rack's agent process (child of `ip netns exec`, same PID as the agent). */
export interface RackAgent {
  /** PID of the current agent process (changes with {@link RackAgent.restart}). */
  readonly pid: number;
  logFile: string;
  /** stdout + stderr of the current agent process (the log file has every run's). */
  output(): string;
  /** SIGKILL and wait for the exit (a crash: nothing flushed, nothing closed). */
  kill(): Promise<void>;
  /** Starts the agent again on the same config and state dir (after {@link RackAgent.kill}) and waits until it is ready. */
  restart(): Promise<void>;
}

/** A running virtual rack. */
export interface VirtualRack {
  /** The namespace everything runs in. */
  namespace: string;
  dir: string;
  /** The agent's config file. */
  configPath: string;
  /** The management API and status page, reachable from this process's namespace. */
  managementUrl: string;
  agent: RackAgent;
  hosts: RackHost[];
  /** Applies the hosts' manifests (when started with `apply: false`). */
  applyHosts(): Promise<void>;
  /** Kills everything by PID, deletes the namespace; idempotent; throws the collected problems. */
  stop(): Promise<void>;
}

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../agent/cli.js');
const RELAY = fileURLToPath(new URL('./rack/relay.js', import.meta.url));
const live = new Set<() => void>();
process.once('exit', () => { for (const cleanup of live) cleanup(); });

function spawnInNamespace(ns: string, command: string, args: readonly string[], logFile: string, env?: Record<string, string>): LabProcess {
  const child = spawn('ip', ['netns', 'exec', ns, command, ...args], { stdio: ['pipe', 'pipe', 'pipe'], ...(env === undefined ? {} : { env: { ...process.env, ...env } }) });
  const proc = trackProcess(child);
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  void proc.exited.then(() => { log.end(); });
  return proc;
}

/**
 * Fetches `url` into `file` with curl inside namespace `ns`: what a BMC on the provisioning
 * network does for InsertMedia (boot HTTP listens on the rack bridge, not in this namespace).
 */
function downloadInNamespace(ns: string, url: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', ns, 'curl', '-sS', '--fail', '--max-time', '180', '-o', file, url], (error, _stdout, stderr) => {
      if (error === null) resolve();
      else reject(new Error(`virtual media download of ${url} in ${ns} failed: ${stderr.trim() || error.message}`));
    });
  });
}

/** Kills the QEMU whose PID is in `pidFile`, only if that PID is still a rackside guest. */
async function killGuest(pidFile: string, name: string): Promise<void> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes(`rackside-${name}`)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return; // exited meanwhile
  }
  // Not our child (ipmi_sim's chassis control started it): wait for /proc to let go of it.
  // (A zombie's cmdline reads empty, so an unreaped one counts as gone.)
  const alive = async (): Promise<boolean> => (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes(`rackside-${name}`);
  await waitFor(async () => !(await alive()), `guest ${name} (pid ${pid}) to exit`, 5000, 50).catch(() => undefined);
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await link(from, to).catch(() => copyFile(from, to));
}

/** Links the foreign-architecture ramdisks under `<cacheDir>/ramdisk/<arch>/` and the boot assets under `<stateDir>/boot-assets/`. */
async function linkRackFiles(agent: { stateDir: string; cacheDir: string }, options: VirtualRackOptions): Promise<void> {
  for (const { arch, dir: from } of options.foreignRamdisks ?? []) {
    for (const file of ['vmlinuz', 'initrd']) await linkOrCopy(join(from, file), join(agent.cacheDir, 'ramdisk', arch, file));
  }
  for (const [path, file] of options.bootAssets ?? []) await linkOrCopy(file, join(agent.stateDir, 'boot-assets', path));
}

/** Starts the rack (see the module comment); on failure everything started is removed. */
export async function startVirtualRack(options: VirtualRackOptions): Promise<VirtualRack> {
  options.hosts.forEach(validateHostSpec);
  if (new Set(options.hosts.map((h) => h.name)).size !== options.hosts.length) throw new RangeError('host names must be unique');
  const log = options.log ?? ((): void => undefined);
  const dir = options.stateDir ?? await mkdtemp(join(tmpdir(), 'rackside-rack-'));
  await mkdir(dir, { recursive: true });
  const keep = options.keepFiles ?? options.stateDir !== undefined;
  const cleanups: (() => Promise<void>)[] = [];
  const syncCleanups: (() => void)[] = [];
  const lastResort = (): void => { for (const c of syncCleanups) c(); };
  live.add(lastResort);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= (async () => {
    const problems: string[] = [];
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((err: unknown) => problems.push(err instanceof Error ? err.message : String(err)));
    }
    live.delete(lastResort);
    if (!keep) await rm(dir, { recursive: true, force: true });
    if (problems.length > 0) throw new Error(`virtual rack teardown: ${problems.join('; ')}`);
  })());

  try {
    const ns: RackNamespace = await createRackNamespace(rackAddresses(options.network));
    cleanups.push(() => ns.remove());
    syncCleanups.push(() => { ns.removeSync(); });
    log(`namespace ${ns.name}: bridge br0 ${rackAddresses(options.network).join(' ')}`);

    const ramdiskDir = options.ramdiskDir === null ? undefined : options.ramdiskDir ?? (await ensureRackRamdisk({ log })).dir;
    const cacheDir = join(dir, 'images');
    await mkdir(join(cacheDir, ramdiskDir === undefined ? '' : 'ramdisk'), { recursive: true });
    // The ISO and its manifest (the per-host overlay slot) are there when the build had format iso.
    for (const file of ['vmlinuz', 'initrd', 'rackside.iso', 'manifest.json']) {
      if (ramdiskDir === undefined) break;
      const from = join(ramdiskDir, file);
      if (file !== 'vmlinuz' && file !== 'initrd' && !existsSync(from)) continue;
      const to = join(cacheDir, 'ramdisk', file);
      await link(from, to).catch(() => copyFile(from, to));
    }

    const agentPaths = { stateDir: join(dir, 'agent-state'), cacheDir };
    await linkRackFiles(agentPaths, options);

    const hosts: RackHost[] = [];
    const relaySpecs: RelaySpec[] = [];
    for (const [i, spec] of options.hosts.entries()) {
      const hostDir = join(dir, 'hosts', spec.name);
      await mkdir(hostDir, { recursive: true });
      const paths = guestPaths(hostDir, spec);
      await createGuestFiles(spec, paths);
      await writeFile(paths.serialLog, '');
      const tap = await ns.addTap(`rtap${i}`);
      cleanups.push(() => killGuest(paths.pidFile, spec.name)); // (at exit, ns.removeSync kills guests with the rest of the namespace)
      const serialLog = (): Promise<string> => readFile(paths.serialLog, 'latin1').catch(() => '');
      if (spec.bmc === 'redfish') {
        const qemu = spawnInNamespace(ns.name, guestQemuBinary(spec), qemuArgs(spec, paths, tap, { paused: true, bootIndex: { nic: 1, disk: 0 } }), join(hostDir, 'qemu.log'));
        cleanups.push(async () => { await qemu.stop('SIGKILL'); });
        await waitFor(() => {
          if (qemu.child.exitCode !== null) throw new Error(`QEMU for ${spec.name} exited: ${qemu.stderr()}`);
          return existsSync(paths.bmcQmp);
        }, `QEMU's QMP socket for ${spec.name}`, 15_000, 50);
        const bmc = await startRackRedfishBmc({
          dir: hostDir, qmpSocket: paths.bmcQmp, nsPort: 8000 + i, virtualMedia: spec.virtualMedia === true,
          download: (url, file) => downloadInNamespace(ns.name, url, file),
        });
        cleanups.push(() => bmc.stop());
        relaySpecs.push(bmc.nsRelay);
        hosts.push({
          spec, tap, paths, bmcAddress: bmc.address, redfish: bmc, serialLog,
          bmcCalls: () => Promise.resolve([
            ...bmc.server.state.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`),
            ...bmc.backend.calls,
          ]),
        });
      } else {
        const start = await writeGuestStartScript(spec, paths, tap, 'qemu-system-x86_64');
        const bmc = await startRackIpmiBmc({
          ns: ns.name, dir: join(hostDir, 'ipmi'), port: spec.ipmiLanPort ?? 6230 + i, qmpSocket: paths.bmcQmp, startCommand: start,
          guest: { pidFile: paths.pidFile, qemuName: `rackside-${spec.name}` }, kcsPort: spec.ipmiKcsPort,
        });
        cleanups.push(() => bmc.stop());
        hosts.push({ spec, tap, paths, bmcAddress: bmc.address, ipmi: bmc, serialLog, bmcCalls: () => bmc.calls() });
      }
      log(`host ${spec.name}: ${spec.firmware.toUpperCase()} guest on ${tap} (${spec.mac}), ${spec.bmc} BMC ${hosts.at(-1)?.bmcAddress ?? ''}`);
    }

    const configPath = join(dir, 'rackside.yaml');
    await writeFile(configPath, options.agentConfig?.(agentPaths) ?? renderAgentConfig({ ...agentPaths, logLevel: options.logLevel ?? 'info', ...(options.network === undefined ? {} : { network: options.network }) }));
    const agentLog = join(dir, 'agent.log');
    let agent: LabProcess | undefined;
    const startAgent = async (): Promise<LabProcess> => {
      // The rack copies in its cached build (ramdisk-cache.ts): the agent builds none unless asked.
      const started = spawnInNamespace(ns.name, process.execPath, [CLI, 'agent', '--config', configPath], agentLog, { RACKSIDE_RAMDISK_BUILD: options.ramdiskBuild ?? 'off' });
      agent = started;
      await waitFor(() => {
        if (started.child.exitCode !== null) throw new Error(`the agent exited with ${started.child.exitCode}:\n${started.stdout()}${started.stderr()}`);
        return started.stdout().includes('rackside agent ready');
      }, 'the agent to be ready', 30_000, 100);
      return started;
    };
    cleanups.push(async () => { await agent?.stop('SIGTERM', 5000); });
    if (options.startAgent ?? true) {
      const first = await startAgent();
      log(`agent pid ${first.pid}: DHCP full on br0, boot HTTP http://${RACK_NETWORK.agentAddress}:${RACK_NETWORK.httpPort}`);
    }
    const rackAgent: RackAgent = {
      get pid() { return agent?.pid ?? 0; },
      logFile: agentLog,
      output: () => (agent === undefined ? '' : agent.stdout() + agent.stderr()),
      kill: async () => { await agent?.stop('SIGKILL', 0); },
      restart: async () => {
        if (agent !== undefined && agent.child.exitCode === null && agent.child.signalCode === null) throw new Error('restart: the agent is still running (kill it first)');
        await startAgent();
      },
    };

    for (const p of options.publish ?? []) {
      relaySpecs.push({ listen: { kind: 'tcp', host: '127.0.0.1', port: p.nsPort }, target: { kind: 'unix', path: p.socketPath } });
    }
    const managementSocket = join(dir, 'management.sock');
    relaySpecs.push({ listen: { kind: 'unix', path: managementSocket }, target: { kind: 'tcp', host: '127.0.0.1', port: RACK_NETWORK.managementPort } });
    const relayProcess = spawnInNamespace(ns.name, process.execPath, [RELAY, ...relaySpecs.map(formatRelaySpec)], join(dir, 'relay.log'));
    cleanups.push(async () => { await relayProcess.stop('SIGTERM', 2000); });
    await waitFor(() => {
      if (relayProcess.child.exitCode !== null) throw new Error(`the namespace relay exited: ${relayProcess.stderr()}`);
      return relayProcess.stdout().includes('relay ready');
    }, 'the namespace relay', 15_000, 50);
    const management: Relay = await startRelay({ listen: { kind: 'tcp', host: '127.0.0.1', port: options.managementPort ?? 0 }, target: { kind: 'unix', path: managementSocket } });
    cleanups.push(() => management.close());
    const managementUrl = `http://127.0.0.1:${management.port ?? 0}`;

    const applyHosts = async (): Promise<void> => {
      const docs = hosts.flatMap((h) => hostManifests(h.spec, { address: h.bmcAddress, username: h.redfish?.username ?? h.ipmi?.username ?? '', password: h.redfish?.password ?? h.ipmi?.password ?? '' }, options.online ?? false));
      const res = await fetch(`${managementUrl}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(docs) });
      if (!res.ok) throw new Error(`applying the rack's hosts failed: HTTP ${res.status} ${await res.text()}`);
    };
    if (options.apply ?? true) await applyHosts();
    return {
      namespace: ns.name,
      dir,
      configPath,
      managementUrl,
      agent: rackAgent,
      hosts,
      applyHosts,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
