/**
 * @module What the agent says about its background ramdisk build (ramdisk-builds.ts): the
 * status it reports (status page, `/metrics`, the status file `rackside doctor` reads), the
 * message of a host waiting for the build ("waiting for the amd64 ramdisk build (step 3/5,
 * composing the initramfs, 40 %)"), and a failed build's reason and fix, told from the build's
 * error output (no kernel package reachable, a configured kernel missing, a full disk).
 * @pure
 */
import { BUILD_PHASE_TITLES, debianArchOf, RAMDISK_ARCHES, type BuildPhase, type DebianArch } from '../../../images/index.js';

/** The architecture of a status that names none: the head node's ramdisk, amd64 (builds before `arch` was reported). */
export const RAMDISK_ARCH: DebianArch = 'amd64';

/**
 * The Debian architecture of the ramdisk a host of CPU architecture `cpuArchitecture` boots
 * (metal3's spelling: `x86_64`, `aarch64`; empty is metal3's default x86_64), or undefined when
 * no ramdisk can be built for it.
 */
export function ramdiskArchOf(cpuArchitecture: string): DebianArch | undefined {
  return debianArchOf(cpuArchitecture === '' ? 'x86_64' : cpuArchitecture);
}

/**
 * Why a host of CPU architecture `cpuArchitecture` cannot boot a ramdisk of this agent (no
 * ramdisk can be built for that architecture: images/debian-arch.ts), or undefined when it can.
 */
export function ramdiskArchProblem(cpuArchitecture: string): string | undefined {
  if (ramdiskArchOf(cpuArchitecture) !== undefined) return undefined;
  return `no ${cpuArchitecture} ramdisk: the agent builds ramdisks for ${RAMDISK_ARCHES.join(' and ')} (x86_64 and aarch64) only, and this host's architecture is ${cpuArchitecture} (spec.architecture or inspection) — correct spec.architecture if it is wrong`;
}

/** `initrd`: kernel + initrd for network boots; `iso`: also the ISO virtual-media hosts boot. */
export type RamdiskFormat = 'initrd' | 'iso';

/** The background build as reported (GET /api/v1/status `bootServices.ramdisk`, the status file). */
export interface RamdiskBuildStatus {
  /**
   * `checking`: comparing the build on disk with its inputs; `building`; `ready`: a current
   * build is served; `failed`: the last build failed (`message`, `fix`). (With
   * RACKSIDE_RAMDISK_BUILD=off there is no build and no status.)
   */
  state: 'checking' | 'building' | 'ready' | 'failed';
  /** The format being built, or of the build served. */
  format?: RamdiskFormat;
  /** The Debian architecture of this build (absent: {@link RAMDISK_ARCH}). */
  arch?: DebianArch;
  phase?: BuildPhase;
  step?: number;
  total?: number;
  percent?: number;
  /** One line for people: progress, why a rebuild, or why the build failed. */
  message: string;
  /** A failed build: what to do about it. */
  fix?: string;
  /** Seconds the last finished build took. */
  lastBuildSeconds?: number;
  /** RFC 3339 time of the last change of state. */
  since: string;
}

/** What a host that needs the ramdisk may do now; `changed`: the host was last told something else (publish it). */
export type RamdiskGate =
  | { kind: 'ready'; /** The host had waited or failed on the build before. */ waited: boolean }
  | { kind: 'wait'; message: string; changed: boolean }
  | { kind: 'failed'; message: string; changed: boolean };

/** Thrown by a ramdisk boot when the ramdisk build failed; the message has the reason and the fix. */
export class RamdiskUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RamdiskUnavailableError';
  }
}

/** "step 3/5, composing the initramfs, 40 %" of a build in progress, or "" before its first step. */
function progressText(status: RamdiskBuildStatus): string {
  if (status.step === undefined || status.total === undefined || status.phase === undefined) return '';
  return ` (step ${status.step}/${status.total}, ${BUILD_PHASE_TITLES[status.phase]}, ${status.percent ?? 0} %)`;
}

function ramdiskName(format: RamdiskFormat | undefined, arch: DebianArch | undefined): string {
  return format === 'iso' ? `${arch ?? RAMDISK_ARCH} ramdisk ISO` : `${arch ?? RAMDISK_ARCH} ramdisk`;
}

/** The sentence of the agent's RamdiskBuild event as a step starts: "building the amd64 ramdisk (step 3/5, …, 40 %)". */
export function buildingMessage(status: RamdiskBuildStatus): string {
  return `building the ${ramdiskName(status.format, status.arch)}${progressText(status)}`;
}

/** The sentence of a host waiting for the build in `status` (WaitingForRamdisk). */
export function waitMessage(status: RamdiskBuildStatus): string {
  const what = ramdiskName(status.format, status.arch);
  if (status.state === 'checking') return `waiting for the ${what}: checking the build on disk against its inputs`;
  return `waiting for the ${what} build${progressText(status)}`;
}

/** The sentence of a failed build on a host and on the agent: reason, then fix. */
export function failureMessage(status: RamdiskBuildStatus): string {
  return `the ${status.arch ?? RAMDISK_ARCH} ramdisk build failed: ${status.message}${status.fix === undefined ? '' : ` — fix: ${status.fix}`}`;
}

/** The last `error: …` line of the build's stderr, else its last non-empty line, else the exit. */
export function buildErrorLine(stderr: string, exit: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const error = [...lines].reverse().find((l) => l.startsWith('error: '));
  return (error?.slice('error: '.length) ?? lines.at(-1) ?? `the build exited (${exit}) without a message`).slice(0, 1000);
}

/** The fix for a build of `arch` (default the head node's, {@link RAMDISK_ARCH}) that failed with `reason` (see the module comment); `cacheDir` is `images.cacheDir`. */
export function buildFailureFix(reason: string, cacheDir: string, arch: DebianArch = RAMDISK_ARCH): string {
  if (/ENOSPC|no space left on device/i.test(reason)) return `free space on the file system of ${cacheDir} (a build needs about 1 GB), then restart the agent or wait for its retry`;
  // Another architecture than the head node's is built from its packages through the private apt (images/foreign-apt.ts).
  if (arch !== RAMDISK_ARCH && /apt|linux-image|busybox|\.deb|Debian/i.test(reason)) {
    return `make "rackside images build --arch ${arch}" work on this head node: its apt needs a reachable Debian mirror that carries ${arch} packages (the private ${arch} lists are under ${cacheDir}/build/apt-${arch})`;
  }
  if (arch !== RAMDISK_ARCH) return `run "rackside images build --arch ${arch}" on the head node to see the whole error`;
  if (/images\.ramdisk\.kernel|kernel image .* does not exist|modules\.dep is missing/i.test(reason)) {
    return 'point images.ramdisk.kernel at an existing /boot/vmlinuz-* and images.ramdisk.modules at its /lib/modules/<release> tree, or remove both to use Debian\'s linux-image-amd64';
  }
  if (/linux-image/.test(reason)) {
    return 'make "apt-get download linux-image-amd64" work on this head node (apt-get update, a reachable Debian mirror), or set images.ramdisk.kernel and images.ramdisk.modules to a kernel on this head node';
  }
  if (/busybox/.test(reason)) return 'make "apt-get download busybox-static" work on this head node (apt-get update, a reachable Debian mirror)';
  if (/isolinux|syslinux|grub|shim/.test(reason)) return 'make "apt-get download isolinux syslinux-common grub-efi-amd64-signed shim-signed" work on this head node (the ISO for virtual media needs them)';
  return 'run "rackside images build" on the head node to see the whole error';
}
