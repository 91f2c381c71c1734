/**
 * @module The host page's diagnosis: a table of pure rules over a host and its timeline
 * events that name the likely cause when a host is stuck — an unanswered DHCP offer, an
 * arm64 client offered an x86 binary, a ramdisk that never called home, an unreachable BMC,
 * an aborted TFTP transfer, a host stuck in a busy state, bad BMC credentials, provisioning
 * retries exhausted, the same request failing the same way again and again (a missing ramdisk),
 * a host waiting for the agent's ramdisk build. Each rule looks at the newest boot attempt only: a later success
 * (REQUEST, heartbeat, successful BMC call, completed transfer) silences it.
 * @pure
 */
import type { BareMetalHost, ProvisioningState } from '../../host/types.js';
import type { StoredEvent } from '../../store/types.js';
import { formatDuration, parseTimeMs } from './host-model.js';
import { baseName, dataNumber, dataString, laneOf, stateChangeTarget, type LaneId } from './timeline.js';

/** How bad a finding is. */
export type Severity = 'error' | 'warning' | 'info';

/** One diagnosis line: a title naming the cause and a detail saying what to check. */
export interface Finding {
  rule: string;
  severity: Severity;
  title: string;
  detail: string;
  /** When the condition started. */
  atMs?: number;
  /** The timeline lane it concerns. */
  lane?: LaneId;
}

/** Thresholds of the time-based rules. */
export interface DiagnosisThresholds {
  /** An OFFER unanswered this long (or three OFFERs) means the client went elsewhere. Default 10 s. */
  offerUnansweredMs: number;
  /** Kernel and initrd fetched and no ramdisk callback for this long. Default 5 min. */
  ramdiskSilenceMs: number;
  /** Time in a busy state before it counts as stuck. */
  stuckMs: Partial<Record<ProvisioningState, number>>;
  /** The reconciler's provisioning retry limit (agent/main.ts: 5). */
  maxProvisioningRetries: number;
}

/** Defaults of {@link DiagnosisThresholds}. */
export const DEFAULT_THRESHOLDS: DiagnosisThresholds = {
  offerUnansweredMs: 10_000,
  ramdiskSilenceMs: 5 * 60_000,
  stuckMs: { registering: 10 * 60_000, inspecting: 20 * 60_000, preparing: 30 * 60_000, provisioning: 60 * 60_000, deprovisioning: 60 * 60_000 },
  maxProvisioningRetries: 5,
};

/** What the rules see. `events` are the host's timeline (host and boot-MAC events), any order. */
export interface DiagnosisInput {
  host?: BareMetalHost;
  events: readonly StoredEvent[];
  nowMs: number;
  thresholds?: Partial<DiagnosisThresholds>;
  /** Formats a time for titles (default ISO 8601 UTC to the second). */
  formatTime?: (ms: number) => string;
}

interface Timed {
  event: StoredEvent;
  atMs: number;
}

/** The normalised input every rule gets. */
interface Context {
  host: BareMetalHost | undefined;
  /** Oldest first. */
  events: Timed[];
  nowMs: number;
  t: DiagnosisThresholds;
  time: (ms: number) => string;
}

type Rule = (c: Context) => Finding | undefined;

const X86_FILE = /undionly|\.kpxe$|\.pxe$|^ipxe\.efi$|^snponly\.efi$|x86_64|x64|amd64|i386|ia32/i;
const ARM64_FILE = /arm64|aarch64|aa64/i;
const KERNEL_FILE = /vmlinuz|bzimage|^kernel|^linux$/i;
const INITRD_FILE = /initrd|initramfs|\.cpio(\.gz|\.xz|\.zst)?$/i;
/** A host's unified kernel image on boot HTTP (agent/boot/unified-images.ts `UKI_MOUNT`). */
const UNIFIED_IMAGE_PATH = /^\/uki\/[^/]+\.efi$/;
const CREDENTIAL_TEXT = /credential|password|username|unauthori[sz]ed|\b401\b|authenticat|secret|forbidden|\b403\b/i;
const UNREACHABLE_TEXT = /unreachable|timed? ?out|timeout|connection refused|econnrefused|ehostunreach|enetunreach|no route|socket hang up/i;

/** The architecture family a boot file name was built for, when its name says. */
export function bootFileArch(bootFile: string): 'x86' | 'arm64' | undefined {
  const name = baseName(bootFile);
  if (ARM64_FILE.test(name)) return 'arm64';
  if (X86_FILE.test(name)) return 'x86';
  return undefined;
}

/** The family of a client arch name from DHCP option 93 (`x86`, `x86_64`, `arm64` …) or its number. */
function clientArchFamily(arch: string | undefined, archType: number | undefined): 'x86' | 'arm64' | undefined {
  if (arch !== undefined && /arm64|aarch64/i.test(arch)) return 'arm64';
  if (arch !== undefined && /x86|ia32|i386|amd64/i.test(arch)) return 'x86';
  // RFC 4578 §2.1 / IANA processor architecture types: 11 and 19 (HTTP) are ARM 64-bit UEFI.
  if (archType === 11 || archType === 19) return 'arm64';
  if (archType === 0 || archType === 6 || archType === 7 || archType === 9 || archType === 16) return 'x86';
  return undefined;
}

function last<T>(items: readonly T[], predicate: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i -= 1) {
    const item = items[i];
    if (item !== undefined && predicate(item)) return item;
  }
  return undefined;
}

const after = (items: readonly Timed[], atMs: number | undefined): Timed[] => (atMs === undefined ? [...items] : items.filter((i) => i.atMs > atMs));
const is = (reason: string) => (i: Timed): boolean => i.event.reason === reason;

const offersWithoutRequest: Rule = (c) => {
  const dhcp = c.events.filter((i) => laneOf(i.event) === 'dhcp');
  const answered = last(dhcp, (i) => i.event.reason === 'DHCPRequest' || i.event.reason === 'DHCPAck');
  const offers = after(dhcp, answered?.atMs).filter(is('DHCPOffer'));
  const elsewhere = after(dhcp, answered?.atMs).find((i) => i.event.reason === 'DHCPIgnored' && /other-server|another server/i.test(dataString(i.event, 'detail') ?? i.event.message));
  const first = offers[0];
  const newest = offers[offers.length - 1];
  if (first === undefined || newest === undefined) return undefined;
  if (elsewhere === undefined && offers.length < 3 && c.nowMs - newest.atMs < c.t.offerUnansweredMs) return undefined;
  const chose = elsewhere === undefined ? '' : ' The client then requested an address from another server.';
  return {
    rule: 'dhcp-offer-no-request', severity: 'error', lane: 'dhcp', atMs: first.atMs,
    title: 'Offers sent, no REQUEST: another DHCP server answered?',
    detail: `${offers.length} DHCPOFFER${offers.length === 1 ? '' : 's'} sent since ${c.time(first.atMs)} and the client never requested one.${chose} Look for a second DHCP server (or a relay forwarding to one) on the provisioning network, or switch rackside to proxy mode.`,
  };
};

const archMismatch: Rule = (c) => {
  const dhcp = c.events.filter((i) => laneOf(i.event) === 'dhcp');
  const offer = last(dhcp, (i) => (i.event.reason === 'DHCPOffer' || i.event.reason === 'DHCPAck') && dataString(i.event, 'bootFile') !== undefined);
  if (offer === undefined) return undefined;
  const bootFile = dataString(offer.event, 'bootFile') ?? '';
  const xid = dataNumber(offer.event, 'xid');
  // The reply may not repeat the client's arch: take it from the request of the same transaction.
  const request = last(dhcp, (i) => i.atMs <= offer.atMs && (i.event.reason === 'DHCPDiscover' || i.event.reason === 'DHCPRequest') && (xid === undefined || dataNumber(i.event, 'xid') === xid));
  const source = [offer.event, request?.event].find((e) => e !== undefined && (dataString(e, 'arch') !== undefined || dataNumber(e, 'archType') !== undefined));
  const client = source === undefined ? undefined : clientArchFamily(dataString(source, 'arch'), dataNumber(source, 'archType'));
  const file = bootFileArch(bootFile);
  if (client === undefined || file === undefined || client === file) return undefined;
  const name = (a: 'x86' | 'arm64'): string => (a === 'x86' ? 'an x86' : 'an arm64');
  return {
    rule: 'arch-mismatch', severity: 'error', lane: 'dhcp', atMs: offer.atMs,
    title: `${client} client was offered ${name(file)} binary`,
    detail: `The ${offer.event.reason === 'DHCPAck' ? 'DHCPACK' : 'DHCPOFFER'} named boot file ${bootFile}, built for ${file}, but the client announced ${dataString(source ?? offer.event, 'arch') ?? client} (DHCP option 93). Check spec.architecture and the boot-file matrix; the firmware will refuse or hang on the wrong binary.`,
  };
};

const ramdiskSilent: Rule = (c) => {
  const fetched = (test: (path: string) => boolean): Timed | undefined => last(c.events, (i) => {
    const lane = laneOf(i.event);
    if (lane === 'http') {
      const status = dataNumber(i.event, 'status') ?? 0;
      return status >= 200 && status < 300 && i.event.data?.completed !== false && test(dataString(i.event, 'path') ?? '');
    }
    return lane === 'tftp' && i.event.reason === 'TFTPTransferDone' && test(dataString(i.event, 'file') ?? '');
  });
  const kernel = fetched((p) => KERNEL_FILE.test(baseName(p)));
  const initrd = fetched((p) => INITRD_FILE.test(baseName(p)));
  // A UEFI HTTPS boot fetches one unified image holding both (docs/https-boot.md).
  const image = fetched((p) => UNIFIED_IMAGE_PATH.test(p));
  const fetchedMs = image?.atMs ?? (kernel === undefined || initrd === undefined ? undefined : Math.max(kernel.atMs, initrd.atMs));
  if (fetchedMs === undefined) return undefined;
  if (c.events.some((i) => laneOf(i.event) === 'ramdisk' && i.atMs >= fetchedMs)) return undefined;
  const silentMs = c.nowMs - fetchedMs;
  if (silentMs < c.t.ramdiskSilenceMs) return undefined;
  const what = image === undefined ? 'the kernel and initrd' : 'its unified kernel image over HTTPS';
  const tls = image === undefined ? '' : ' After an HTTPS boot the console also says when the ramdisk has no curl or no CA and calls nothing.';
  return {
    rule: 'ramdisk-silent', severity: 'error', lane: 'ramdisk', atMs: fetchedMs,
    title: `${image === undefined ? 'Kernel and initrd' : 'Unified kernel image'} fetched, no ramdisk heartbeat for ${formatDuration(silentMs)}: check the console / kernel arguments`,
    detail: `The host downloaded ${what} at ${c.time(fetchedMs)} but the ramdisk agent never called back. Look at the serial or BMC console: a kernel panic, a missing NIC driver, or a wrong agent URL or console= argument on the kernel command line are the usual causes.${tls}`,
  };
};

const bmcUnreachable: Rule = (c) => {
  const bmc = c.events.filter((i) => laneOf(i.event) === 'bmc' && (i.event.reason === 'BMCCall' || i.event.reason === 'BMCCallFailed'));
  const ok = last(bmc, is('BMCCall'));
  const failures = after(bmc, ok?.atMs);
  const first = failures[0];
  const newest = failures[failures.length - 1];
  if (first !== undefined && newest !== undefined) {
    const why = dataString(newest.event, 'detail') ?? newest.event.message;
    return {
      rule: 'bmc-unreachable', severity: 'error', lane: 'bmc', atMs: first.atMs,
      title: `BMC unreachable since ${c.time(first.atMs)}`,
      detail: `${failures.length} BMC call${failures.length === 1 ? '' : 's'} failed since then; the latest: ${why}. Check the BMC's network cable and address (${c.host?.spec.bmc?.address ?? 'spec.bmc.address'}), and whether it answers at all.`,
    };
  }
  const status = c.host?.status;
  if (status === undefined || ok !== undefined) return undefined;
  const bmcError = status.errorType === 'power management error' || status.errorType === 'registration error' || status.errorType === 'provisioned registration error';
  if (!bmcError || !UNREACHABLE_TEXT.test(status.errorMessage)) return undefined;
  const since = c.events.find((i) => i.event.type === 'Warning' && i.event.message === status.errorMessage)?.atMs ?? parseTimeMs(status.lastUpdated);
  return {
    rule: 'bmc-unreachable', severity: 'error', lane: 'bmc', ...(since === undefined ? {} : { atMs: since }),
    title: `BMC unreachable since ${since === undefined ? 'the last status update' : c.time(since)}`,
    detail: `${status.errorMessage}. Check the BMC's network and address (${c.host?.spec.bmc?.address ?? 'spec.bmc.address'}).`,
  };
};

const tftpAborted: Rule = (c) => {
  const tftp = c.events.filter((i) => laneOf(i.event) === 'tftp');
  const error = last(tftp, is('TFTPTransferError'));
  if (error === undefined) return undefined;
  const file = dataString(error.event, 'file') ?? '';
  if (tftp.some((i) => i.atMs >= error.atMs && i.event.seq !== error.event.seq && i.event.reason === 'TFTPTransferDone' && dataString(i.event, 'file') === file)) return undefined;
  const bytes = dataNumber(error.event, 'bytes') ?? 0;
  // Many PXE ROMs read the size from the OACK (tsize, RFC 2349) and then abort on purpose before
  // block 1, to re-request the file: an abort with nothing sent is only a problem without a retry.
  const blockSize = dataNumber(error.event, 'blockSizeBytes') ?? 512;
  const block = dataNumber(error.event, 'block') ?? Math.ceil(bytes / blockSize);
  const text = dataString(error.event, 'error') ?? error.event.message;
  const timedOut = /timeout|timed out/i.test(text);
  return {
    rule: 'tftp-aborted', severity: bytes === 0 ? 'warning' : 'error', lane: 'tftp', atMs: error.atMs,
    title: timedOut ? `TFTP transfer timed out at block ${block}` : `TFTP transfer aborted at block ${block} by the client`,
    detail: `${baseName(file) || 'The file'} stopped after ${bytes} bytes (block size ${blockSize}): ${text}. A firmware that mishandles large blksize or windowsize options, or packet loss on the provisioning network, is the usual cause; the client did not retry.`,
  };
};

const OPERATION_OF: Partial<Record<ProvisioningState, 'register' | 'inspect' | 'provision' | 'deprovision'>> = {
  registering: 'register', inspecting: 'inspect', provisioning: 'provision', deprovisioning: 'deprovision',
};

const stuckInState: Rule = (c) => {
  const host = c.host;
  if (host === undefined) return undefined;
  const state = host.status.provisioning.state;
  const limit = c.t.stuckMs[state];
  if (limit === undefined || host.status.operationalStatus === 'error') return undefined;
  const entered = last(c.events, (i) => stateChangeTarget(i.event) === state)?.atMs;
  const operation = OPERATION_OF[state];
  const startMs = entered ?? (operation === undefined ? undefined : parseTimeMs(host.status.operationHistory[operation].start));
  if (startMs === undefined || c.nowMs - startMs <= limit) return undefined;
  const hint = state === 'inspecting' || state === 'provisioning' || state === 'deprovisioning' || state === 'preparing'
    ? 'the ramdisk never reported back: follow the boot timeline above to the last step that happened'
    : 'the BMC never answered the registration calls';
  return {
    rule: 'stuck-in-state', severity: 'warning', atMs: startMs,
    title: `Stuck in ${state} for ${formatDuration(c.nowMs - startMs)}`,
    detail: `${host.metadata.name} entered ${state} at ${c.time(startMs)}; ${hint}.`,
  };
};

const registrationCredentials: Rule = (c) => {
  const status = c.host?.status;
  if (status === undefined) return undefined;
  const registration = status.errorType === 'registration error' || status.errorType === 'provisioned registration error';
  const credentialEvent = last(c.events, is('BMCCredentialError'));
  if (!(registration && CREDENTIAL_TEXT.test(status.errorMessage)) && !(credentialEvent !== undefined && status.operationalStatus === 'error')) return undefined;
  const secret = c.host?.spec.bmc?.credentialsName ?? '';
  const where = secret === '' ? 'spec.bmc.credentialsName' : `the secret ${c.host?.metadata.namespace ?? 'default'}/${secret}`;
  return {
    rule: 'registration-credentials', severity: 'error', lane: 'bmc',
    title: `Registration failed on the BMC credentials: check ${where}`,
    detail: `${status.errorMessage || credentialEvent?.event.message || 'The BMC refused the credentials'}. Check the username and password in the secret (and that it exists in the host's namespace), then apply it again.`,
  };
};

const retriesExhausted: Rule = (c) => {
  const status = c.host?.status;
  if (status?.errorType !== 'provisioning error') return undefined;
  const failures = status.provisioningFailCount ?? 0;
  if (failures < c.t.maxProvisioningRetries && !/times in a row/.test(status.errorMessage)) return undefined;
  const image = c.host?.spec.image?.url ?? status.lastAttemptedImage?.url ?? 'the image';
  return {
    rule: 'provisioning-retries-exhausted', severity: 'error',
    title: `Provisioning failed ${failures} times: retries exhausted`,
    detail: `rackside stopped retrying ${image}. Fix the image or its checksum and change spec.image to try again (or remove the image to deprovision). ${status.errorMessage}`,
  };
};

/** `GET /ramdisk/vmlinuz` or `…/initrd`: the files of the agent-built ramdisk. */
const RAMDISK_REQUEST = /^(GET|HEAD) \/ramdisk\/(vmlinuz|initrd)$/;

/** Whether `request` (`GET /path`, `TFTP file`) succeeded in an event after `afterMs`. */
function succeededAfter(c: Context, request: string, afterMs: number): boolean {
  const tftp = request.startsWith('TFTP ');
  const target = request.slice(request.indexOf(' ') + 1);
  return c.events.some((i) => i.atMs > afterMs && (tftp
    ? i.event.reason === 'TFTPTransferDone' && dataString(i.event, 'file') === target
    : laneOf(i.event) === 'http' && dataString(i.event, 'path') === target && (dataNumber(i.event, 'status') ?? 500) < 400));
}

/** One finding for a run of identical failures (agent/boot/repeated-failures.ts), until the request succeeds. */
const repeatedFailure: Rule = (c) => {
  const summary = last(c.events, is('BootFailureRepeated'));
  if (summary === undefined) return undefined;
  const request = dataString(summary.event, 'request') ?? '';
  const failure = dataString(summary.event, 'failure') ?? '';
  if (request === '' || succeededAfter(c, request, summary.atMs)) return undefined;
  const count = dataNumber(summary.event, 'count') ?? 0;
  const sinceMs = parseTimeMs(dataString(summary.event, 'firstTime') ?? '') ?? summary.atMs;
  const lane: LaneId = request.startsWith('TFTP ') ? 'tftp' : 'http';
  if (RAMDISK_REQUEST.test(request) && failure === '404') {
    return {
      rule: 'repeated-boot-failure', severity: 'error', lane, atMs: sinceMs,
      title: `The ramdisk is missing on this head node: ${request} answered 404 ${count} times in a row`,
      detail: `Since ${c.time(sinceMs)} the host asked for ${request.slice(request.indexOf(' ') + 1)} and got 404 each time: there is no ramdisk in <images.cacheDir>/ramdisk. The agent builds it in the background when it starts (the Boot services panel and "rackside doctor" show the build, or why it failed); with RACKSIDE_RAMDISK_BUILD=off, build it with "rackside images build".`,
    };
  }
  return {
    rule: 'repeated-boot-failure', severity: 'error', lane, atMs: sinceMs,
    title: `${request} failed the same way ${count} times in a row (${failure})`,
    detail: `Since ${c.time(sinceMs)} every attempt of ${request} ended in ${failure}; the host retries without getting further. Check what the boot services serve for it (boot HTTP mounts, tftp.root, images.cacheDir) and the agent's log.`,
  };
};

/** A host that waits for the agent's ramdisk build (agent/provisioner/local/ramdisk-builds.ts) says so until it is built. */
const waitingForRamdisk: Rule = (c) => {
  const waiting = last(c.events, (i) => i.event.reason === 'WaitingForRamdisk' || i.event.reason === 'RamdiskReady');
  if (waiting?.event.reason !== 'WaitingForRamdisk') return undefined;
  return {
    rule: 'waiting-for-ramdisk', severity: 'info', atMs: waiting.atMs,
    title: waiting.event.message.replace(/^waiting/, 'Waiting'),
    detail: 'The host is not powered on into a network boot until the agent has built the ramdisk; it goes on by itself then. The Boot services panel shows the build.',
  };
};

/** Every rule, in the order findings are listed (boot path first, then host-level). */
export const DIAGNOSIS_RULES: readonly (readonly [string, Rule])[] = [
  ['waiting-for-ramdisk', waitingForRamdisk],
  ['repeated-boot-failure', repeatedFailure],
  ['dhcp-offer-no-request', offersWithoutRequest],
  ['arch-mismatch', archMismatch],
  ['tftp-aborted', tftpAborted],
  ['ramdisk-silent', ramdiskSilent],
  ['bmc-unreachable', bmcUnreachable],
  ['registration-credentials', registrationCredentials],
  ['provisioning-retries-exhausted', retriesExhausted],
  ['stuck-in-state', stuckInState],
];

/** ISO 8601 UTC to the second: `2026-11-30 17:29:10 UTC`. */
export function formatIsoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * Runs every rule and returns the findings (see the module comment). A host in error that no
 * rule explains gets one generic finding quoting its error, so the page never hides an error.
 */
export function diagnoseHost(input: DiagnosisInput): Finding[] {
  const events = input.events
    .flatMap((event) => {
      const atMs = parseTimeMs(event.time);
      return atMs === undefined ? [] : [{ event, atMs }];
    })
    .sort((a, b) => a.atMs - b.atMs || a.event.seq - b.event.seq);
  const c: Context = {
    host: input.host, events, nowMs: input.nowMs, t: { ...DEFAULT_THRESHOLDS, ...input.thresholds }, time: input.formatTime ?? formatIsoSeconds,
  };
  const findings = DIAGNOSIS_RULES.flatMap(([, rule]) => rule(c) ?? []);
  const status = input.host?.status;
  const hostRules = new Set(['bmc-unreachable', 'registration-credentials', 'provisioning-retries-exhausted']);
  if (status !== undefined && status.operationalStatus === 'error' && !findings.some((f) => hostRules.has(f.rule))) {
    findings.push({
      rule: 'host-error', severity: 'error',
      title: `${status.errorType === undefined || status.errorType === '' ? 'Error' : status.errorType} (attempt ${status.errorCount})`,
      detail: status.errorMessage || 'The host reports an error without a message.',
    });
  }
  return findings;
}
