/**
 * @module `npm run demo`: a virtual rack on this machine (virtual-rack.ts) — rackside with the
 * local provisioner in a network namespace and two QEMU guests under TCG, one with an IPMI BMC
 * (ipmi_sim) and one with a Redfish BMC (UEFI when OVMF is installed) — that register, get
 * inspected and are then provisioned with a tiny demo OS image (whose boot sector prints a line
 * on the serial console) while the status page shows it live. It checks the Debian prerequisites first and
 * says exactly what to install; without root or QEMU it falls back to the embedded demo rack
 * (`rackside agent --demo`, simulated hosts) so the README's first command always shows
 * something. Ctrl-C removes every namespace, guest and process it created.
 *
 * Usage: node dist/test/lab/demo.js [--virtual | --embedded] [--port N] [--exit-when-available]
 *   --virtual   fail instead of falling back when a prerequisite is missing
 *   --embedded  skip the checks and run the embedded demo rack
 *   --port N    status page port on 127.0.0.1 (default 8080, any free port if taken)
 *   --exit-when-available  stop and exit 0 once every host is available (CI), 1 if not within 8 min
 * Environment: RACKSIDE_DEMO=virtual|embedded does the same as the flags.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DebianPackageError, fetchDebianPackage } from '../../images/debian-package.js';
import { checkRackPrerequisites, formatRackPrerequisites } from './rack/prerequisites.js';
import { OVMF_CODE } from './rack/qemu-guest.js';
import { DEBIAN_PACKAGE_CACHE, ensureRackRamdisk } from './rack/ramdisk-cache.js';
import { startRackImageServer } from './rack/image-server.js';
import { buildRackOsImage, type RackOsImage } from './rack/os-image.js';
import { startVirtualRack, type RackHostSpec, type VirtualRack } from './virtual-rack.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../agent/cli.js');
const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(`--${name}`);
const mode = flag('embedded') ? 'embedded' : flag('virtual') ? 'virtual' : process.env.RACKSIDE_DEMO ?? 'auto';
const portArg = args.indexOf('--port');
const port = portArg >= 0 ? Number(args[portArg + 1]) : 8080;
const exitWhenAvailable = flag('exit-when-available');
/** With --exit-when-available: give up (exit 1) when the hosts are not all available by then. */
const EXIT_DEADLINE_MS = 8 * 60_000;

function say(line: string): void {
  process.stdout.write(`[demo] ${line}\n`);
}

/** Runs the embedded demo rack in the foreground until it exits (Ctrl-C reaches it too). */
function runEmbedded(): Promise<number> {
  say('starting the embedded demo rack instead (simulated hosts, no QEMU): rackside agent --demo');
  say('status page: http://127.0.0.1:8080/ once the agent logs "rackside agent ready"; Ctrl-C stops it');
  const child = spawn(process.execPath, [CLI, 'agent', '--demo'], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals): void => { child.kill(signal); };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((done) => {
    child.once('exit', (code) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      done(code ?? 1);
    });
  });
}

function demoHosts(uefi: boolean): RackHostSpec[] {
  return [
    { name: 'rack1-ipmi-0', bmc: 'ipmi', firmware: 'bios', memoryMb: 512, cpus: 1, disks: [{ sizeMb: 256, serial: 'DEMO-IPMI-0-D0' }], mac: '52:54:00:de:00:01' },
    {
      name: 'rack1-redfish-0', bmc: 'redfish', firmware: uefi ? 'uefi' : 'bios', memoryMb: 768, cpus: 2,
      disks: [{ sizeMb: 512, serial: 'DEMO-RF-0-D0' }, { sizeMb: 128, serial: 'DEMO-RF-0-D1' }], mac: '52:54:00:de:00:02',
    },
  ];
}

interface HostView {
  metadata: { name: string };
  status: { provisioning: { state: string }; errorMessage: string; hardware?: { ramMebibytes?: number; cpu?: { count?: number }; storage?: unknown[] } };
}

/** Prints each host's state changes; resolves `target` when all hosts reach it, 'error' past the CI deadline. */
async function follow<T extends 'available' | 'provisioned'>(rack: VirtualRack, stopped: () => boolean, target: T): Promise<T | 'error' | 'stopped'> {
  const seen = new Map<string, string>();
  const startedMs = performance.now();
  while (!stopped()) {
    const res = await fetch(`${rack.managementUrl}/api/v1/hosts`).catch(() => undefined);
    const body = res?.ok === true ? (await res.json()) as { items?: HostView[] } : {};
    const hosts = body.items ?? [];
    for (const h of hosts) {
      const text = `${h.status.provisioning.state}${h.status.errorMessage === '' ? '' : ` (error: ${h.status.errorMessage})`}`;
      if (seen.get(h.metadata.name) === text) continue;
      seen.set(h.metadata.name, text);
      const hw = h.status.hardware;
      const detail = h.status.provisioning.state === 'available' && hw !== undefined
        ? ` — ${hw.cpu?.count ?? '?'} CPU, ${hw.ramMebibytes ?? '?'} MiB, ${hw.storage?.length ?? 0} disks`
        : '';
      say(`${h.metadata.name}: ${text}${detail}`);
    }
    if (hosts.length === rack.hosts.length && hosts.every((h) => h.status.provisioning.state === target)) return target;
    // Errors are retried by rackside (backoff), so they are shown, not fatal; CI gives up after a while.
    if (exitWhenAvailable && performance.now() - startedMs > EXIT_DEADLINE_MS) return 'error';
    await new Promise((r) => setTimeout(r, 2000));
  }
  return 'stopped';
}

/**
 * The demo OS image: its MBR prints the marker on BIOS guests; for UEFI guests it also carries an
 * EFI system partition with Debian's signed GRUB whose grub.cfg prints it (OVMF has no CSM).
 */
async function demoImage(dir: string, uefi: boolean): Promise<RackOsImage> {
  if (!uefi) return buildRackOsImage(dir, 'demo-os', 'rackside demo');
  const grub = await fetchDebianPackage('grub-efi-amd64-signed', DEBIAN_PACKAGE_CACHE);
  return buildRackOsImage(dir, 'demo-os', 'rackside demo', 'raw', { uefiLoader: join(grub.rootDir, 'usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed') });
}

/** Port of the demo image server inside the rack namespace (published from this process). */
const DEMO_IMAGE_PORT = 8088;

/** Sets `spec.image` and `spec.online` (upstream provisions only online hosts) on every host of the rack. */
async function provisionAll(rack: VirtualRack, url: string, sha256: string): Promise<void> {
  const res = await fetch(`${rack.managementUrl}/api/v1/hosts`);
  const { items } = (await res.json()) as { items: { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; spec: Record<string, unknown> }[] };
  // Root device hints name the first disk by serial (the default profile's /dev/sda does not exist on virtio).
  const serialOf = new Map(rack.hosts.map((h) => [h.spec.name, h.spec.disks[0]?.serial]));
  const updated = items.map((h) => {
    const serial = serialOf.get(h.metadata.name);
    return {
      apiVersion: h.apiVersion, kind: h.kind, metadata: { name: h.metadata.name, namespace: h.metadata.namespace },
      spec: {
        ...h.spec, online: true, image: { url, checksum: sha256, checksumType: 'sha256', format: 'raw' },
        ...(serial === undefined ? {} : { rootDeviceHints: { serialNumber: serial } }),
      },
    };
  });
  const applied = await fetch(`${rack.managementUrl}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(updated) });
  if (!applied.ok) say(`setting the image failed: HTTP ${applied.status} ${await applied.text()}`);
}

async function runVirtual(): Promise<number> {
  const uefi = existsSync(OVMF_CODE);
  const hosts = demoHosts(uefi);
  if (!uefi) say(`OVMF is not installed (${OVMF_CODE}): both guests boot with SeaBIOS (sudo apt-get install ovmf for a UEFI guest)`);
  try {
    const ramdisk = await ensureRackRamdisk({ log: say });
    say(`ramdisk: ${ramdisk.built ? 'built' : 'cached'} in ${ramdisk.dir} (kernel ${ramdisk.manifest.inputs.kernel.release})`);
  } catch (err) {
    if (!(err instanceof DebianPackageError)) throw err;
    say(`the ramdisk cannot be built: ${err.message}`);
    say('apt needs its package lists to download the kernel and busybox-static packages: sudo apt-get update');
    return mode === 'virtual' ? 1 : runEmbedded();
  }
  let stopRequested = false;
  // A tiny bootable OS image the hosts get once they are available (interactive runs only): its
  // MBR prints a line on the serial console, so the provisioned disk visibly boots.
  const imageDir = await mkdtemp(join(tmpdir(), 'rackside-demo-image-'));
  const image = exitWhenAvailable ? undefined : await demoImage(imageDir, uefi).catch((err: unknown) => {
    say(`no demo OS image (${err instanceof Error ? err.message : String(err)}): hosts stop at available`);
    return undefined;
  });
  const imageServer = image === undefined ? undefined : await startRackImageServer(imageDir, [image]);
  const publish = imageServer === undefined ? [] : [{ nsPort: DEMO_IMAGE_PORT, socketPath: imageServer.socketPath }];
  const start = (managementPort: number): Promise<VirtualRack> => startVirtualRack({ hosts, managementPort, log: say, online: false, publish });
  const rack = await start(port).catch((err: unknown) => {
    if (err instanceof Error && /EADDRINUSE/.test(err.message)) {
      say(`port ${port} is taken; using a free port`);
      return start(0);
    }
    throw err;
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= (async () => {
    stopRequested = true;
    say(`stopping: guests, BMCs, agent and namespace ${rack.namespace} …`);
    await rack.stop();
    await imageServer?.close();
    await rm(imageDir, { recursive: true, force: true });
    say(`removed namespace ${rack.namespace}, ${rack.hosts.length} guests, their BMCs and the agent`);
  })());
  let signalled: () => void = () => undefined;
  const signal = new Promise<void>((resolveSignal) => { signalled = resolveSignal; });
  const onSignal = (): void => {
    // A second Ctrl-C while cleaning up changes nothing: the cleanup is what removes the namespace.
    stopRequested = true;
    signalled();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  say('');
  say(`status page: ${rack.managementUrl}/`);
  say(`management API: ${rack.managementUrl}/api/v1/hosts   (RACKSIDE_SERVER=${rack.managementUrl} rackside get hosts)`);
  say(`guest consoles: ${rack.dir}/hosts/*/serial.log, agent log: ${rack.agent.logFile}`);
  say('hosts register, network-boot the rackside ramdisk and are inspected (about a minute each under TCG); Ctrl-C stops and removes everything');
  say('');
  try {
    const outcome = await follow(rack, () => stopRequested, 'available');
    if (exitWhenAvailable && outcome !== 'stopped') {
      await stop();
      return outcome === 'available' ? 0 : 1;
    }
    if (outcome === 'available' && image !== undefined) {
      say(`every host is available: provisioning them with the demo OS image (${image.sizeBytes} bytes, sha256 ${image.sha256.slice(0, 12)}…)`);
      await provisionAll(rack, `http://127.0.0.1:${DEMO_IMAGE_PORT}/${basename(image.path)}`, image.sha256);
      const done = await follow(rack, () => stopRequested, 'provisioned');
      if (done === 'provisioned') say(`every host is provisioned and boots its disk ("${image.bootMessage}" in ${rack.dir}/hosts/*/serial.log); delete the image from a host to see it cleaned (Ctrl-C to finish)`);
    } else if (outcome === 'available') {
      say('every host is available: open the status page to see their hardware and boot timelines (Ctrl-C to finish)');
    }
    await signal;
    await stop();
    return 0;
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

async function main(): Promise<number> {
  if (mode === 'embedded') return runEmbedded();
  const prerequisites = checkRackPrerequisites({ ipmi: true, uefi: false });
  if (!prerequisites.ok) {
    say('the virtual rack (real QEMU guests, BMCs and network boot) needs:');
    for (const line of formatRackPrerequisites(prerequisites).split('\n')) say(`  ${line}`);
    if (mode === 'virtual') return 1;
    return runEmbedded();
  }
  return runVirtual();
}

main().then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    process.stderr.write(`[demo] failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
