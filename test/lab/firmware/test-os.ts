/**
 * @module The firmware tests' test OS: Debian's kernel (the signed one — `linux-image-amd64` /
 * `linux-image-arm64` resolve to `linux-image-<abi>-<arch>`, the package built from
 * linux-signed-*, so Secure Boot and shim accept it) plus a tiny busybox initramfs whose `/init`
 * (test-os-init.ts) reports on the serial console, fetches a marker from rackside and powers
 * off. One build per architecture, shared by every firmware test and across runs:
 * `<os.tmpdir()>/rackside-firmware-os/<arch>-<key>/{vmlinuz,initrd,os.json}`, the key hashing
 * the init script, the module list and the package versions; `os.json` is written last, so a
 * directory with it is complete. amd64 packages come through the images builder's cache
 * (`apt-get download`, `dpkg-deb -x`, never installed); arm64 ones through the private apt
 * configuration of arm64-apt.ts; apt's answers are remembered per state of the package lists
 * (apt-memo.ts), so a reused build costs no apt call. The initramfs is composed by the images builder
 * (busybox with its applets, `/init`, the modules with their dependencies in load order); the
 * arm64 busybox cannot run here, so its applet list is the amd64 busybox-static's (the same
 * Debian source and configuration).
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../../images/files.js';
import { buildInitramfsArchive, compressInitramfs } from '../../../images/initramfs.js';
import { fetchDebianPackage } from '../../../images/debian-package.js';
import { listBusyboxApplets } from '../../../images/kernel.js';
import { DEBIAN_PACKAGE_CACHE } from '../rack/ramdisk-cache.js';
import { hostCandidate, hostMetaDependency } from './apt-memo.js';
import { fetchArm64Package, resolveArm64Meta } from './arm64-apt.js';
import { TEST_OS_INIT } from './test-os-init.js';

/** Debian architecture of a test OS. */
export type TestOsArch = 'amd64' | 'arm64';

/** A built test OS. */
export interface FirmwareTestOs {
  arch: TestOsArch;
  dir: string;
  vmlinuz: string;
  initrd: string;
  /** `uname -r` of the kernel. */
  kernelRelease: string;
  /** Debian package and version of the kernel. */
  kernelPackage: string;
  kernelVersion: string;
  initrdBytes: number;
  /** True when this call built it. */
  built: boolean;
}

/** Where built test OSes are kept. */
export const TEST_OS_ROOT = join(tmpdir(), 'rackside-firmware-os');

/** Modules the test OS loads: the virtio NIC, and efivarfs to read the Secure Boot variable. */
export const TEST_OS_MODULES = ['virtio_pci', 'virtio_net', 'efivarfs'] as const;

interface Inputs {
  kernelPackage: string;
  kernelVersion: string;
  kernelRelease: string;
  vmlinuzPath: string;
  modulesDir: string;
  busyboxPath: string;
  busyboxVersion: string;
  applets: string[];
}

async function depmodAll(rootDir: string): Promise<void> {
  for (const base of [rootDir, join(rootDir, 'usr')]) {
    for (const release of await readdir(join(base, 'lib/modules')).catch(() => [] as string[])) {
      await runCommand('depmod', ['-b', base, release]);
    }
  }
}

async function amd64Busybox(): Promise<{ path: string; version: string; applets: string[] }> {
  const version = await hostCandidate('busybox-static');
  const pkg = await fetchDebianPackage('busybox-static', DEBIAN_PACKAGE_CACHE, version);
  const path = join(pkg.rootDir, 'bin/busybox');
  return { path, version, applets: await listBusyboxApplets(path) };
}

/** The Debian kernel, as the images builder's resolveKernel fetches it, with remembered apt answers. */
async function amd64Kernel(): Promise<{ name: string; version: string; release: string; vmlinuz: string; modulesDir: string }> {
  const name = await hostMetaDependency('linux-image-amd64', 'linux-image-');
  const version = await hostCandidate(name);
  const pkg = await fetchDebianPackage(name, DEBIAN_PACKAGE_CACHE, version, depmodAll);
  const vmlinuz = (await readdir(join(pkg.rootDir, 'boot'))).find((f) => f.startsWith('vmlinuz-'));
  if (vmlinuz === undefined) throw new Error(`package ${name} has no boot/vmlinuz-*`);
  const release = vmlinuz.slice('vmlinuz-'.length);
  return { name, version, release, vmlinuz: join(pkg.rootDir, 'boot', vmlinuz), modulesDir: join(pkg.rootDir, 'lib/modules', release) };
}

async function amd64Inputs(): Promise<Inputs> {
  const kernel = await amd64Kernel();
  const busybox = await amd64Busybox();
  return {
    kernelPackage: kernel.name,
    kernelVersion: kernel.version,
    kernelRelease: kernel.release,
    vmlinuzPath: kernel.vmlinuz,
    modulesDir: kernel.modulesDir,
    busyboxPath: busybox.path,
    busyboxVersion: busybox.version,
    applets: busybox.applets,
  };
}

async function arm64Inputs(): Promise<Inputs> {
  const kernelName = await resolveArm64Meta('linux-image-arm64', 'linux-image-');
  const kernel = await fetchArm64Package(kernelName, depmodAll);
  const vmlinuz = (await readdir(join(kernel.rootDir, 'boot'))).find((f) => f.startsWith('vmlinuz-'));
  if (vmlinuz === undefined) throw new Error(`arm64 package ${kernelName} has no boot/vmlinuz-*`);
  const release = vmlinuz.slice('vmlinuz-'.length);
  const busybox = await fetchArm64Package('busybox-static');
  const host = await amd64Busybox();
  return {
    kernelPackage: kernelName,
    kernelVersion: kernel.version,
    kernelRelease: release,
    vmlinuzPath: join(kernel.rootDir, 'boot', vmlinuz),
    modulesDir: join(kernel.rootDir, 'lib/modules', release),
    busyboxPath: join(busybox.rootDir, 'bin/busybox'),
    busyboxVersion: busybox.version,
    applets: host.applets,
  };
}

const pending = new Map<TestOsArch, Promise<FirmwareTestOs>>();

/**
 * Resolves with the test OS for `arch`, building it when no complete build with the current key
 * exists; concurrent calls in one process share one build, concurrent processes each build
 * beside the final directory and the first rename wins. Rejects with a DebianPackageError when
 * apt cannot provide the packages.
 */
export function ensureFirmwareTestOs(arch: TestOsArch, log?: (line: string) => void): Promise<FirmwareTestOs> {
  let build = pending.get(arch);
  if (build === undefined) {
    build = buildOrReuse(arch, log).catch((err: unknown) => {
      pending.delete(arch);
      throw err;
    });
    pending.set(arch, build);
  }
  return build;
}

async function buildOrReuse(arch: TestOsArch, log?: (line: string) => void): Promise<FirmwareTestOs> {
  const inputs = arch === 'amd64' ? await amd64Inputs() : await arm64Inputs();
  const key = createHash('sha256')
    .update(['rackside.firmware-test-os/v1', arch, TEST_OS_INIT, TEST_OS_MODULES.join(','), inputs.kernelPackage, inputs.kernelVersion, inputs.busyboxVersion].join('\0'))
    .digest('hex')
    .slice(0, 20);
  const dir = join(TEST_OS_ROOT, `${arch}-${key}`);
  const result = (built: boolean, initrdBytes: number): FirmwareTestOs => ({
    arch, dir, vmlinuz: join(dir, 'vmlinuz'), initrd: join(dir, 'initrd'),
    kernelRelease: inputs.kernelRelease, kernelPackage: inputs.kernelPackage, kernelVersion: inputs.kernelVersion, initrdBytes, built,
  });
  const cached = await readFile(join(dir, 'os.json'), 'utf8').then((t) => JSON.parse(t) as { initrdBytes: number }, () => undefined);
  if (cached !== undefined) return result(false, cached.initrdBytes);

  log?.(`building the ${arch} test OS (${inputs.kernelPackage} ${inputs.kernelVersion} + busybox initramfs) into ${dir}`);
  await mkdir(TEST_OS_ROOT, { recursive: true });
  const scratch = await mkdtemp(join(TEST_OS_ROOT, `.${arch}-${key}.`));
  try {
    const scripts = join(scratch, 'scripts');
    await mkdir(scripts);
    await writeFile(join(scripts, 'init'), TEST_OS_INIT, { mode: 0o755 });
    const { archive, report } = await buildInitramfsArchive({
      kernelRelease: inputs.kernelRelease,
      modulesDir: inputs.modulesDir,
      modules: TEST_OS_MODULES,
      busyboxPath: inputs.busyboxPath,
      busyboxApplets: inputs.applets,
      hostTools: [],
      agentScriptDir: scripts,
      agentVersion: 'firmware-test-os',
    }, 1_700_000_000);
    if (report.missingModules.length > 0) throw new Error(`${arch} test OS: modules missing from ${inputs.kernelPackage}: ${report.missingModules.join(', ')}`);
    const initrd = await compressInitramfs(archive, 'gzip');
    await writeFile(join(scratch, 'initrd'), initrd);
    await copyFile(inputs.vmlinuzPath, join(scratch, 'vmlinuz'));
    await rm(scripts, { recursive: true });
    await writeFile(join(scratch, 'os.json'), `${JSON.stringify({ arch, ...inputs, applets: inputs.applets.length, initrdBytes: initrd.length }, null, 2)}\n`);
    await rename(scratch, dir).catch(async (err: unknown) => {
      if (await readFile(join(dir, 'os.json')).then(() => false, () => true)) throw err;
      await rm(scratch, { recursive: true, force: true }); // another process finished first
    });
    return result(true, initrd.length);
  } catch (err) {
    await rm(scratch, { recursive: true, force: true });
    throw err;
  }
}
