/**
 * @module `rackside doctor`'s decisions about the head node itself: boot assets (iPXE, signed
 * shim and GRUB from bootsvc's catalog) and the ramdisk's kernel and busybox, each with its
 * sha256; the state directory; the clock; the controller; the BMCs the agent manages; and the
 * running agent's event-loop priority.
 * Network and config checks are in checks.ts.
 * @pure
 */
import { fixForGroup, type BootAssetGroup } from '../../bootsvc/index.js';
import type { Config } from '../config.js';
import type { AssetProbe, BmcProbe, CheckResult, CheckStatus, ControllerProbe, EraseKeyProbe, FileProbe, RamdiskBuildProbe, StateDirProbe } from './types.js';

/** How a missing asset group is graded: iPXE is needed by every network boot; the rest by some hosts only. */
const MISSING_STATUS: Readonly<Record<BootAssetGroup, CheckStatus>> = {
  'ipxe': 'fail',
  'secure-boot-x64': 'warn',
  'arm64': 'skip',
};

const MISSING_NOTE: Readonly<Record<BootAssetGroup, string>> = {
  'ipxe': 'BIOS and UEFI hosts cannot network-boot',
  'secure-boot-x64': 'only needed for bootMode UEFISecureBoot',
  'arm64': 'only needed for arm64 hosts',
};

/** bootsvc's fix recipe for a group on one line: comments dropped, `\` continuations joined. */
function oneLineFix(group: BootAssetGroup, assetsDir: string): string {
  return fixForGroup(group, assetsDir).split('\n').filter((l) => !l.trimStart().startsWith('#')).map((l) => l.replace(/\s*\\$/, '').trim()).join(' ');
}

/** One line per boot asset: found with path and sha256, or missing with the package and the fix. */
export function checkAssets(probes: readonly AssetProbe[], assetsDir: string): CheckResult[] {
  return probes.map((a) => {
    const check = `asset ${a.name}`;
    if (a.path !== undefined) return { check, status: 'ok', detail: `${a.path} sha256:${a.sha256 ?? '?'}`, fix: '' };
    const status = MISSING_STATUS[a.group];
    return { check, status, detail: `missing (package ${a.package}; ${MISSING_NOTE[a.group]})`, fix: status === 'skip' ? '' : oneLineFix(a.group, assetsDir) };
  });
}

/**
 * Verdict on the ramdisk kernel: a configured `images.ramdisk.kernel` must exist; otherwise a
 * kernel already unpacked in the images cache is reported, and none yet is a warning (the
 * first ramdisk build downloads linux-image-amd64 with apt-get, which needs apt access).
 */
export function checkKernel(config: Config, probe: FileProbe): CheckResult {
  const check = 'ramdisk kernel';
  const configured = config.images.ramdisk.kernel;
  if (probe.path !== undefined && probe.sha256 !== undefined) {
    return { check, status: 'ok', detail: `${probe.path} (${probe.source ?? 'cache'}) sha256:${probe.sha256}`, fix: '' };
  }
  if (configured !== undefined) {
    return { check, status: 'fail', detail: `images.ramdisk.kernel ${configured} ${probe.error ?? 'does not exist'}`, fix: 'point images.ramdisk.kernel at an existing /boot/vmlinuz-* (and images.ramdisk.modules at its /lib/modules tree)' };
  }
  return {
    check, status: 'warn', detail: `no kernel in ${config.images.cacheDir}/build/debian yet; the agent's first ramdisk build downloads one`,
    fix: 'make sure "apt-get download linux-image-amd64" works on this host, or set images.ramdisk.kernel',
  };
}

/**
 * Verdict on the ramdisk the agent builds (and serves from `<images.cacheDir>/ramdisk`): a failed
 * build fails with the reason and fix the agent reported on its status and on the waiting hosts;
 * a build in progress is a warning (hosts that need it wait); a build on disk is ok; none yet is
 * a warning (the agent builds it when it starts).
 */
export function checkRamdiskBuild(probe: RamdiskBuildProbe): CheckResult {
  const check = 'ramdisk build';
  const status = probe.status;
  if (status?.state === 'failed') {
    return { check, status: 'fail', detail: `the amd64 ramdisk build failed${status.since === undefined ? '' : ` (${status.since})`}: ${status.message}`, fix: status.fix ?? 'run "rackside images build" to see the whole error' };
  }
  if (status?.state === 'building' || status?.state === 'checking') {
    return { check, status: 'warn', detail: `the agent is ${status.message}`, fix: 'wait: hosts that need the ramdisk wait for it and go on by themselves' };
  }
  if (probe.built !== undefined) return { check, status: 'ok', detail: `${probe.dir}: ${probe.built.format} build, kernel ${probe.built.kernelRelease}`, fix: '' };
  return {
    check, status: 'warn', detail: `no ramdisk in ${probe.dir} yet`,
    fix: 'start the agent: it builds the ramdisk in the background (or build it ahead with "rackside images build")',
  };
}

/** Verdict on busybox: the ramdisk needs a static one (Debian busybox-static); a dynamic /bin/busybox will not run there. */
export function checkBusybox(probe: FileProbe): CheckResult {
  const check = 'busybox (static)';
  const fix = 'apt-get install busybox-static';
  if (probe.path === undefined) return { check, status: 'warn', detail: 'no busybox found (/bin/busybox or the images cache)', fix };
  if (probe.error !== undefined) return { check, status: 'warn', detail: `${probe.path}: ${probe.error}`, fix };
  if (probe.isStatic === false) {
    return { check, status: 'warn', detail: `${probe.path} is dynamically linked (package busybox, not busybox-static)`, fix };
  }
  return { check, status: 'ok', detail: `${probe.path} (${probe.source ?? 'system'}) sha256:${probe.sha256 ?? '?'}`, fix: '' };
}

/** Verdict on the state directory: it must accept a file (create, fsync, remove); ownership by another user than rackside is a warning. */
export function checkStateDir(probe: StateDirProbe): CheckResult {
  const check = 'state dir writable';
  const create = `install -d -m 0700 -o rackside -g rackside ${probe.path} (systemd's StateDirectory= creates it when the service starts)`;
  if (!probe.exists) return { check, status: 'fail', detail: `${probe.path} does not exist`, fix: create };
  if (!probe.writable) return { check, status: 'fail', detail: `${probe.path}: ${probe.error ?? 'not writable'}`, fix: `check the permissions and free space of ${probe.path}` };
  if (probe.agentUid !== undefined && probe.ownerUid !== undefined && probe.ownerUid !== probe.agentUid) {
    return {
      check, status: 'warn', detail: `${probe.path} is writable but owned by uid ${probe.ownerUid}, not rackside (${probe.agentUid})`,
      fix: `chown -R rackside:rackside ${probe.path}`,
    };
  }
  return { check, status: 'ok', detail: `${probe.path}: created, synced and removed a file`, fix: '' };
}

/**
 * Verdict on the erase record signing key: absent is fine (the agent makes it on first start);
 * readable by others or unusable fails, since the agent then refuses to start; otherwise its
 * fingerprint, which auditors trust (docs/erase-records.md).
 */
export function checkEraseKey(probe: EraseKeyProbe): CheckResult {
  const check = 'erase record key';
  if (!probe.exists) return { check, status: 'ok', detail: `${probe.path} not created yet: the agent makes it on first start`, fix: '' };
  if (probe.mode !== undefined && (probe.mode & 0o077) !== 0) {
    return { check, status: 'fail', detail: `${probe.path} is accessible by others (mode ${(probe.mode & 0o777).toString(8)}): the agent refuses to start`, fix: `chmod 600 ${probe.path}` };
  }
  if (probe.error !== undefined || probe.fingerprint === undefined) {
    return { check, status: 'fail', detail: `${probe.path}: ${probe.error ?? 'unreadable'}`, fix: `move ${probe.path} aside (the agent makes a new key; old records still verify against the old ${probe.path}.pub)` };
  }
  return { check, status: 'ok', detail: `${probe.path} ${probe.fingerprint} (what erase record signatures are checked against)`, fix: '' };
}

/** How far the clock may be behind the newest file in the state dir before it is called wrong. */
export const CLOCK_BEHIND_LIMIT_MS = 3_600_000;
/** Earliest plausible year: certificates and leases before it mean an unset RTC. */
export const MIN_CLOCK_YEAR = 2024;

function hours(ms: number): string {
  return `${(ms / 3_600_000).toFixed(1)}h`;
}

/**
 * Verdict on the clock: the year is at least {@link MIN_CLOCK_YEAR}, and the clock is not more
 * than {@link CLOCK_BEHIND_LIMIT_MS} behind the newest file the agent wrote (a clock that went
 * back breaks TLS, lease expiry and event order).
 */
export function checkClock(nowMs: number, probe: Pick<StateDirProbe, 'newestMtimeMs' | 'newestPath'>): CheckResult {
  const check = 'clock';
  const now = new Date(nowMs);
  const fix = 'enable time sync: timedatectl set-ntp true (systemd-timesyncd or chrony), then check timedatectl status';
  if (now.getUTCFullYear() < MIN_CLOCK_YEAR) return { check, status: 'fail', detail: `the clock says ${now.toISOString()}`, fix };
  const newest = probe.newestMtimeMs;
  if (newest !== undefined && newest - nowMs > CLOCK_BEHIND_LIMIT_MS) {
    return { check, status: 'fail', detail: `the clock (${now.toISOString()}) is ${hours(newest - nowMs)} behind ${probe.newestPath ?? 'a state file'}`, fix };
  }
  return { check, status: 'ok', detail: now.toISOString(), fix: '' };
}

/**
 * Verdict on the controller. Not configured is a skip. Any HTTP answer means reachable, except
 * 401/403 (credentials refused: fail). TLS and configuration errors fail; network errors and
 * timeouts only warn: sync is store-and-forward, so the rack keeps working while it is away.
 */
export function checkController(probe: ControllerProbe): CheckResult {
  const check = 'controller';
  if (probe.state === 'not-configured') return { check, status: 'skip', detail: 'no controller configured', fix: '' };
  if (probe.state === 'reachable') {
    if (probe.httpStatus === 401 || probe.httpStatus === 403) {
      return { check, status: 'fail', detail: `${probe.url} refused the credentials (HTTP ${probe.httpStatus})`, fix: 'check controller.token or the TLS client certificate' };
    }
    return { check, status: 'ok', detail: `${probe.url} answered HTTP ${probe.httpStatus}`, fix: '' };
  }
  const detail = `${probe.url}: ${probe.message}`;
  if (probe.code === 'tls' || probe.code === 'config') {
    return { check, status: 'fail', detail, fix: 'check controller.url and controller.tls (ca, cert, key)' };
  }
  return { check, status: 'warn', detail: `${detail} (summaries wait in the outbox)`, fix: 'check the route/firewall to the controller; curl -I the URL from this host' };
}

/** Verdict on BMCs: one ok line when all answer, else one failing line per unreachable BMC. */
export function checkBmcs(probe: BmcProbe): CheckResult[] {
  const check = 'BMCs reachable';
  if (probe.state === 'no-api') {
    return [{ check, status: 'skip', detail: `management API ${probe.server} not reachable (${probe.error}); BMCs not checked`, fix: 'start the agent (systemctl start rackside) or pass --server' }];
  }
  const lines: CheckResult[] = [];
  for (const bad of probe.invalid) {
    lines.push({ check: `BMC of ${bad.host}`, status: 'fail', detail: bad.error, fix: `correct spec.bmc.address of ${bad.host}` });
  }
  const down = probe.results.filter((r) => !r.reachable);
  for (const r of down) {
    lines.push({
      check: `BMC of ${r.host}`, status: 'fail', detail: `${r.protocol} ${r.target} (${r.address}): ${r.error ?? 'no answer'}`,
      fix: 'check the BMC network cable, its IP settings and the route from this host',
    });
  }
  const total = probe.results.length + probe.invalid.length;
  if (total === 0) return [{ check, status: 'skip', detail: `no hosts registered at ${probe.server}`, fix: '' }];
  if (lines.length === 0) return [{ check, status: 'ok', detail: `${total} of ${total} answered`, fix: '' }];
  return lines;
}

/**
 * Verdict on the running agent's event-loop priority. The shipped unit starts the agent at
 * `Nice=-5` (systemd/rackside.service), so that in a PXE storm its DHCP, TFTP and boot HTTP
 * answers get a core back ahead of the head node's other work (docs/PERFORMANCE.md, "PXE storm",
 * "Why `Nice=-5`"); started some other way it runs at the caller's value. `agentPid`: the rackside process
 * holding a boot port, when one does.
 */
export function checkEventLoopPriority(agentPid: number | undefined, nice: number | undefined): CheckResult {
  const check = 'event-loop priority';
  if (agentPid === undefined) return { check, status: 'skip', detail: 'no running agent seen holding a boot port', fix: '' };
  const who = `agent pid ${String(agentPid)}`;
  if (nice === undefined) return { check, status: 'warn', detail: `${who}: cannot read /proc/${String(agentPid)}/stat`, fix: 'run rackside doctor as root' };
  if (nice < 0) return { check, status: 'ok', detail: `${who}: event loop at nice ${String(nice)}`, fix: '' };
  return {
    check, status: 'warn',
    detail: `${who}: event loop at nice ${String(nice)}, not above the head node's other work — started outside the shipped unit (Nice=-5), so in a PXE storm its answers wait for a core behind them`,
    // renice -p acts on the one thread with that ID (setpriority(2) on Linux): the event loop, not its bulk threads.
    fix: `systemctl restart rackside (the unit sets Nice=-5), or for this run: renice -n -5 -p ${String(agentPid)}`,
  };
}
