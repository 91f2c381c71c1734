/**
 * @module The firmware-matrix lab: one network namespace (firmware-namespace.ts, a prefix per
 * test file) holding rackside's provisioning bridge, the real agent (`ip netns exec NS node
 * dist/agent/cli.js agent`, local provisioner, DHCP `full` on br0, TFTP and boot HTTP on the
 * bridge address) and one paused QEMU guest on a tap (firmware-guest.ts), powered on by a
 * virtual Redfish BMC over QMP (the virtual rack's BMC and relays, test/lab/rack/). The guest is
 * applied as a BareMetalHost with `online: false`; rackside registers it, starts inspection and
 * powers it on to boot from the network — from rackside alone — into the test OS (test-os.ts)
 * that rackside serves as its ramdisk (`<cacheDir>/ramdisk/{vmlinuz,initrd}`), next to a marker
 * file holding a per-run nonce the test OS fetches and prints.
 *
 * TFTP root: the lab configures `tftp.root` with the ramdisk files and the signed boot loaders
 * under their served names, so each firmware test pins exactly the files it boots. The agent's
 * own TFTP (agent/boot/boot-services.ts) serves the ramdisk mounts (`/ramdisk/…`, per
 * architecture) and the boot assets under `<stateDir>/boot-assets` too; the mixed-rack e2e
 * (test/e2e/mixed-rack.test.ts) boots through that product path with no `tftp.root`.
 *
 * The x86 guests' BMC also changes their firmware between power cycles (firmware-backend.ts:
 * a `UefiHttp` boot's `HttpBootUri`, Secure Boot), restarting the paused QEMU around the
 * variable-store write; `secureBootOff` starts a Secure Boot guest with Secure Boot off.
 *
 * `stop()` kills the guest, the agent and the relays by PID and deletes the namespace — also
 * when `startFirmwareLab` fails part-way and, as a last resort, at process exit.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { copyFile, link, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HEAD_NODE_ARCH } from '../../../images/arch-inputs.js';
import { ramdiskSubdir } from '../../../images/debian-arch.js';
import type { StoredEvent } from '../../../agent/store/types.js';
import { trackProcess, waitFor, type LabProcess } from '../../helpers/netns.js';
import type { HostBackend, HostBootOptions, HostBootTarget, HostPower, HostSecureBoot } from '../redfish/backend.js';
import { QmpHostBackend } from '../redfish/qmp-backend.js';
import { startVirtualRedfishBmc } from '../redfish/virtual-bmc.js';
import { RACK_NETWORK, renderAgentConfig } from '../rack/rack-config.js';
import { formatRelaySpec, startRelay, type RelaySpec } from '../rack/relay.js';
import { createFirmwareNamespace } from './firmware-namespace.js';
import { FirmwareHostBackend } from './firmware-backend.js';
import { withSecureBootEnable } from './ovmf-settings.js';
import { createFirmwareVars, FIRMWARE_GUEST_NIC_ID, FIRMWARE_GUEST_NIC_PCI, firmwareGuestPaths, firmwareQemuArgs, qemuBinaryFor, type GuestFirmware } from './firmware-guest.js';
import type { FirmwareTestOs } from './test-os.js';
import { agentChildEnv } from '../../helpers/integration.js';
import { ensureBootCertificate } from '../../../agent/boot/boot-ca.js';
import { encodeEfiSignatureLists, pemCertificates } from '../../../agent/boot/efi-signature-list.js';

/** Options of {@link startFirmwareLab}. */
export interface FirmwareLabOptions {
  /** Namespace prefix, unique per test file (`fwpxe` …). */
  prefix: string;
  firmware: GuestFirmware;
  /** The BareMetalHost's `spec.bootMode`. */
  bootMode: 'UEFI' | 'UEFISecureBoot';
  mac: string;
  os: FirmwareTestOs;
  /** Files put in the TFTP root under these names (signed shim and GRUB). */
  tftpFiles?: ReadonlyMap<string, string>;
  memoryMb?: number;
  /**
   * Boot HTTPS (docs/https-boot.md): the agent runs with `http.tls: auto` and `http.tlsBoot: on`,
   * and the guest's firmware trusts its boot CA (made in the agent's state directory before the
   * agent starts, which then keeps it) through fw_cfg `etc/edk2/https/cacerts`.
   */
  httpsBoot?: boolean;
  /** `images.ramdiskKernelParams` (default none: the test OS needs none; the rack ramdisk wants rack-config.ts's). */
  ramdiskKernelParams?: string;
  /** The BMC address scheme (default `redfish+http`); `redfish-uefihttp+http` boots the ramdisk ISO by UEFI HTTP boot. */
  bmcScheme?: 'redfish+http' | 'redfish-uefihttp+http';
  /** The base ISO and manifest the agent serves per host (`<cacheDir>/ramdisk/rackside.iso`). */
  iso?: { iso: string; manifest: string };
  /** The host is applied with the `inspect.metal3.io: disabled` annotation (registering → available without a boot). */
  inspectionDisabled?: boolean;
  /** Secure Boot variables enrolled but Secure Boot switched off in the guest's store at start (`SecureBootEnable` 0). */
  secureBootOff?: boolean;
  log?: (line: string) => void;
}

/** A BMC call the guest's "hardware" received, with its time. */
export interface TimedCall {
  call: string;
  atMs: number;
}

/** A running lab. */
export interface FirmwareLab {
  namespace: string;
  dir: string;
  /** BareMetalHost name. */
  host: string;
  mac: string;
  /** The nonce in the marker file; the test OS prints `marker: <nonce>`. */
  nonce: string;
  managementUrl: string;
  agentLog: string;
  /** Calls the BMC made on the guest (`powerOn Pxe` …), with times. */
  bmcCalls: TimedCall[];
  serialLog(): Promise<string>;
  /** Waits until the serial log matches `pattern`; fails with the log's tail and the timeline. */
  waitForSerial(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** GET /api/v1/boot/<mac>/timeline (everything recorded for the guest's MAC). */
  bootTimeline(): Promise<StoredEvent[]>;
  /** Applies the BareMetalHost again with `spec` merged into its spec (an image to provision …). */
  applySpec(spec: Record<string, unknown>): Promise<void>;
  /** GET /api/v1/hosts/<host>: its provisioning state, error message and timeline events. */
  hostStatus(): Promise<{ state: string; error: string; events: StoredEvent[] }>;
  /** Kills everything by PID and deletes the namespace; idempotent; throws the problems collected. */
  stop(): Promise<void>;
}

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../../agent/cli.js');
const RELAY = fileURLToPath(new URL('../rack/relay.js', import.meta.url));
const BMC_NS_PORT = 8000;
const live = new Set<() => void>();
process.once('exit', () => { for (const cleanup of live) cleanup(); });

function uriNote(options: HostBootOptions | undefined): string {
  return options?.httpBootUri === undefined ? '' : ` ${options.httpBootUri}`;
}

/** A HostBackend that records every call with its time before passing it on. */
class TimedBackend implements HostBackend {
  constructor(private readonly inner: HostBackend, readonly calls: TimedCall[]) {}
  private note(call: string): void { this.calls.push({ call, atMs: Date.now() }); }
  powerState(): Promise<HostPower> { return this.inner.powerState(); }
  get secureBoot(): HostSecureBoot | undefined { return this.inner.secureBoot; }
  powerOn(target: HostBootTarget, options?: HostBootOptions): Promise<void> { this.note(`powerOn ${target}${uriNote(options)}`); return this.inner.powerOn(target, options); }
  powerOff(): Promise<void> { this.note('powerOff'); return this.inner.powerOff(); }
  shutdown(): Promise<void> { this.note('shutdown'); return this.inner.shutdown(); }
  reset(target: HostBootTarget, options?: HostBootOptions): Promise<void> { this.note(`reset ${target}${uriNote(options)}`); return this.inner.reset(target, options); }
  insertMedia(url: string): Promise<void> { this.note(`insertMedia ${url}`); return this.inner.insertMedia(url); }
  ejectMedia(): Promise<void> { this.note('ejectMedia'); return this.inner.ejectMedia(); }
  close(): Promise<void> { return this.inner.close(); }
}

function spawnInNamespace(ns: string, command: string, args: readonly string[], logFile: string, env: NodeJS.ProcessEnv = process.env): LabProcess {
  const child = spawn('ip', ['netns', 'exec', ns, command, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
  const proc = trackProcess(child);
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  void proc.exited.then(() => { log.end(); });
  return proc;
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await link(from, to).catch(() => copyFile(from, to));
}

/** The agent's config: the virtual rack's, plus `tftp.root`, without the rack's ramdisk kernel arguments. */
export function renderFirmwareAgentConfig(input: { stateDir: string; cacheDir: string; tftpRoot: string; ramdiskKernelParams?: string }): string {
  return renderAgentConfig({ ...input, logLevel: 'info', lab: { id: 'firmware-lab', source: 'test/lab/firmware/firmware-lab.ts' }, ramdiskKernelParams: input.ramdiskKernelParams ?? null });
}

function manifests(name: string, mac: string, bootMode: string, bmc: { address: string; username: string; password: string }, firmware: GuestFirmware, inspectionDisabled: boolean): unknown[] {
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-bmc-secret`, namespace: 'default' }, type: 'Opaque', data: { username: b64(bmc.username), password: b64(bmc.password) } },
    {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: { name, namespace: 'default', annotations: { 'rackside.io/description': `QEMU ${firmware} guest (firmware matrix)`, ...(inspectionDisabled ? { 'inspect.metal3.io': 'disabled' } : {}) } },
      spec: { online: false, bootMACAddress: mac, bootMode, bmc: { address: bmc.address, credentialsName: `${name}-bmc-secret` } },
    },
  ];
}

/** Makes the agent's boot CA ahead of it (the agent keeps an existing one) and writes the firmware's cacerts file; returns its path. */
async function enrolBootCa(stateDir: string, guestDir: string): Promise<string> {
  const issued = await ensureBootCertificate(stateDir, [RACK_NETWORK.agentAddress]);
  const path = join(guestDir, 'cacerts.esl');
  await writeFile(path, encodeEfiSignatureLists(pemCertificates(issued.caPem)));
  return path;
}

/** `config` with `http.tls: auto` and `http.tlsBoot: on` added to its `http:` section. */
function withBootHttps(config: string): string {
  const out = config.replace(/^http:\n {2}listen: .*$/m, (section) => `${section}\n  tls: auto\n  tlsBoot: on`);
  if (out === config) throw new Error('the lab config has no http: section to add boot HTTPS to');
  return out;
}

function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}

/** Starts the lab (see the module comment); on failure everything started is removed. */
export async function startFirmwareLab(options: FirmwareLabOptions): Promise<FirmwareLab> {
  const log = options.log ?? ((): void => undefined);
  const dir = await mkdtemp(join(tmpdir(), `rackside-${options.prefix}-`));
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
    if (process.env.RACKSIDE_KEEP_LAB === undefined) await rm(dir, { recursive: true, force: true });
    if (problems.length > 0) throw new Error(`firmware lab teardown: ${problems.join('; ')}`);
  })());

  try {
    const ns = await createFirmwareNamespace(options.prefix, `${RACK_NETWORK.agentAddress}/${RACK_NETWORK.prefixLength}`);
    cleanups.push(() => ns.remove());
    syncCleanups.push(() => { ns.removeSync(); });
    log(`namespace ${ns.name}: br0 ${RACK_NETWORK.agentAddress}/${RACK_NETWORK.prefixLength}`);

    // What rackside serves: the test OS as its ramdisk (boot HTTP), plus the TFTP root.
    const nonce = randomBytes(8).toString('hex');
    const cacheDir = join(dir, 'images');
    const tftpRoot = join(dir, 'tftp');
    // Where the agent serves the ramdisk of the guest's architecture: an arm64 guest (DHCP arch 11) gets ramdisk/arm64/ on this amd64 head node.
    const sub = ramdiskSubdir(options.os.arch, HEAD_NODE_ARCH);
    for (const file of ['vmlinuz', 'initrd'] as const) {
      await linkOrCopy(options.os[file], join(cacheDir, sub, file));
      await linkOrCopy(options.os[file], join(tftpRoot, sub, file));
    }
    await writeFile(join(cacheDir, 'ramdisk', 'marker'), `${nonce}\n`);
    for (const [name, path] of options.tftpFiles ?? []) await linkOrCopy(path, join(tftpRoot, name));
    if (options.iso !== undefined) {
      await linkOrCopy(options.iso.iso, join(cacheDir, 'ramdisk', 'rackside.iso'));
      await linkOrCopy(options.iso.manifest, join(cacheDir, 'ramdisk', 'manifest.json'));
    }

    // The guest, paused ("powered off") until its BMC powers it on.
    const guestDir = join(dir, 'guest');
    await mkdir(guestDir);
    const stateDir = join(dir, 'agent-state');
    const httpsCaCerts = options.httpsBoot === true ? await enrolBootCa(stateDir, guestDir) : undefined;
    const spec = {
      name: `${options.prefix}-${process.pid}`, firmware: options.firmware, mac: options.mac, memoryMb: options.memoryMb ?? (options.firmware === 'aavmf' ? 1024 : 512),
      ...(httpsCaCerts === undefined ? {} : { httpsCaCerts }),
    };
    const paths = firmwareGuestPaths(guestDir);
    await createFirmwareVars(spec, paths);
    if (options.secureBootOff === true) await writeFile(paths.vars, withSecureBootEnable(new Uint8Array(await readFile(paths.vars)), false));
    await writeFile(paths.serialLog, '');
    const tap = 'fwtap0';
    await ns.addTap(tap);
    // The BMC restarts QEMU (paused) when it rewrites the variable store: the current process is `qemu`.
    const launchQemu = async (): Promise<LabProcess> => {
      await rm(paths.qmp, { force: true });
      const proc = spawnInNamespace(ns.name, qemuBinaryFor(options.firmware).binary, firmwareQemuArgs(spec, paths, tap), join(guestDir, 'qemu.log'));
      await waitFor(() => {
        if (proc.child.exitCode !== null) throw new Error(`QEMU exited: ${proc.stderr()}`);
        return existsSync(paths.qmp);
      }, 'the guest\'s QMP socket', 15_000, 50);
      return proc;
    };
    let qemu = await launchQemu();
    let relaunching = false;
    cleanups.push(async () => { await qemu.stop('SIGKILL'); });

    const bmcCalls: TimedCall[] = [];
    const qmp = new QmpHostBackend({ socketPath: paths.qmp, bootDevices: { Pxe: FIRMWARE_GUEST_NIC_ID } });
    const relaunch = async (between: () => Promise<void>): Promise<void> => {
      relaunching = true;
      try {
        await qemu.stop('SIGKILL'); // paused ("off"): nothing to flush
        await between();
        qemu = await launchQemu();
      } finally {
        relaunching = false;
      }
    };
    const firmwareBackend = options.firmware === 'aavmf' ? qmp : new FirmwareHostBackend({
      qmp, varsPath: paths.vars, relaunch, note: (change) => { bmcCalls.push({ call: `firmware ${change}`, atMs: Date.now() }); },
      nic: { pciDevice: FIRMWARE_GUEST_NIC_PCI.device, pciFunction: FIRMWARE_GUEST_NIC_PCI.function, mac: options.mac },
    });
    const backend = new TimedBackend(firmwareBackend, bmcCalls);
    const username = 'admin';
    const password = randomBytes(6).toString('hex');
    const bmc = await startVirtualRedfishBmc({ https: false, host: '127.0.0.1', port: 0, username, password, backend: () => backend });
    cleanups.push(() => bmc.stop());
    const bmcSocket = join(dir, 'bmc.sock');
    const bmcRelay = await startRelay({ listen: { kind: 'unix', path: bmcSocket }, target: { kind: 'tcp', host: '127.0.0.1', port: Number(bmc.host.split(':').pop()) } });
    cleanups.push(() => bmcRelay.close());

    const configPath = join(dir, 'rackside.yaml');
    const config = renderFirmwareAgentConfig({ stateDir, cacheDir, tftpRoot, ...(options.ramdiskKernelParams === undefined ? {} : { ramdiskKernelParams: options.ramdiskKernelParams }) });
    await writeFile(configPath, options.httpsBoot === true ? withBootHttps(config) : config);
    const agentLog = join(dir, 'agent.log');
    // The lab copies in its cached build: the agent builds none (docs/test-peers.md, "The ramdisk in tests").
    const agent = spawnInNamespace(ns.name, process.execPath, [CLI, 'agent', '--config', configPath], agentLog, agentChildEnv());
    cleanups.push(async () => { await agent.stop('SIGTERM', 5000); });
    await waitFor(() => {
      if (agent.child.exitCode !== null) throw new Error(`the agent exited with ${agent.child.exitCode}:\n${agent.stdout()}${agent.stderr()}`);
      return agent.stdout().includes('rackside agent ready');
    }, 'the agent to be ready', 30_000, 100);
    log(`agent pid ${agent.pid}: DHCP, TFTP and boot HTTP on ${RACK_NETWORK.agentAddress}`);

    const managementSocket = join(dir, 'management.sock');
    const relaySpecs: RelaySpec[] = [
      { listen: { kind: 'unix', path: managementSocket }, target: { kind: 'tcp', host: '127.0.0.1', port: RACK_NETWORK.managementPort } },
      { listen: { kind: 'tcp', host: '127.0.0.1', port: BMC_NS_PORT }, target: { kind: 'unix', path: bmcSocket } },
    ];
    const relay = spawnInNamespace(ns.name, process.execPath, [RELAY, ...relaySpecs.map(formatRelaySpec)], join(dir, 'relay.log'));
    cleanups.push(async () => { await relay.stop('SIGTERM', 2000); });
    await waitFor(() => {
      if (relay.child.exitCode !== null) throw new Error(`the namespace relay exited: ${relay.stderr()}`);
      return relay.stdout().includes('relay ready');
    }, 'the namespace relay', 15_000, 50);
    const management = await startRelay({ listen: { kind: 'tcp', host: '127.0.0.1', port: 0 }, target: { kind: 'unix', path: managementSocket } });
    cleanups.push(() => management.close());
    const managementUrl = `http://127.0.0.1:${management.port ?? 0}`;

    const host = `fw-${options.prefix}`;
    const docs = manifests(host, options.mac, options.bootMode, { address: `${options.bmcScheme ?? 'redfish+http'}://127.0.0.1:${BMC_NS_PORT}/redfish/v1/Systems/1`, username, password }, options.firmware, options.inspectionDisabled === true);
    const applyDocs = async (list: unknown[]): Promise<void> => {
      const applied = await fetch(`${managementUrl}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(list) });
      if (!applied.ok) throw new Error(`applying ${host} failed: HTTP ${applied.status} ${await applied.text()}`);
    };
    await applyDocs(docs);
    const applySpec = (spec: Record<string, unknown>): Promise<void> => {
      const [secret, bmh] = docs as [unknown, { spec: Record<string, unknown> }];
      return applyDocs([secret, { ...bmh, spec: { ...bmh.spec, ...spec } }]);
    };
    const hostStatus = async (): Promise<{ state: string; error: string; events: StoredEvent[] }> => {
      const res = await fetch(`${managementUrl}/api/v1/hosts/${host}`);
      if (!res.ok) throw new Error(`GET host ${host}: HTTP ${res.status}`);
      const bmh = (await res.json()) as { status: { provisioning: { state: string }; errorMessage: string } };
      const timeline = await fetch(`${managementUrl}/api/v1/hosts/${host}/timeline?limit=500`);
      const events = timeline.ok ? ((await timeline.json()) as { items: StoredEvent[] }).items : [];
      return { state: bmh.status.provisioning.state, error: bmh.status.errorMessage, events };
    };
    log(`applied ${host} (${options.mac}, bootMode ${options.bootMode}); BMC on 127.0.0.1:${BMC_NS_PORT} in the namespace`);

    const serialLog = (): Promise<string> => readFile(paths.serialLog, 'latin1').catch(() => '');
    const bootTimeline = async (): Promise<StoredEvent[]> => {
      const res = await fetch(`${managementUrl}/api/v1/boot/${options.mac}/timeline?limit=2000`);
      if (!res.ok) throw new Error(`GET timeline: HTTP ${res.status} ${await res.text()}`);
      return ((await res.json()) as { items: StoredEvent[] }).items;
    };
    const waitForSerial = async (pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = await serialLog();
        const match = pattern.exec(text);
        if (match !== null) return match;
        if (!relaunching && qemu.child.exitCode !== null) throw new Error(`QEMU exited (${qemu.child.exitCode}) before the serial log matched ${String(pattern)}:\n${tail(text)}\n${qemu.stderr()}`);
        if (Date.now() > deadline) {
          const timeline = await bootTimeline().catch((err: unknown) => [{ source: '?', reason: 'unavailable', message: String(err) }]);
          const agentText = await readFile(agentLog, 'utf8').catch(() => '');
          throw new Error(
            `the serial log did not match ${String(pattern)} within ${timeoutMs / 1000} s\n--- serial log (tail)\n${tail(text)}\n` +
            `--- boot timeline\n${timeline.map((e) => `${e.source} ${e.reason} ${e.message}`).join('\n')}\n--- agent log (tail)\n${tail(agentText, 15)}\n--- BMC calls\n${bmcCalls.map((c) => c.call).join(', ')}`,
          );
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    return { namespace: ns.name, dir, host, mac: options.mac, nonce, managementUrl, agentLog, bmcCalls, serialLog, waitForSerial, bootTimeline, applySpec, hostStatus, stop };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
