/**
 * @module Builds the status page's `GET /api/v1/status` document ({@link AgentStatusReport},
 * agent/web/ui/status-report.ts) from the agent's own numbers: boot services
 * (`BootServices.stats()`: boot HTTP, DHCP, TFTP when it runs), BMC reachability (the power
 * sweep's cached entries), image downloads and the SSH server/tunnel (`GET /api/v1/ssh`'s
 * shape). Every source is optional and a missing one leaves its section out, which the page
 * shows as "not configured". Controller sync is not repeated: the page reads `GET /api/v1/sync`.
 * The mappers are pure functions of their inputs; the reporter only keeps what a rate or a
 * "since" needs between two calls (the previous byte counters, each BMC's last reachability).
 * The clock comes in as `nowMs`.
 * @pure
 */
import type { PowerSweepEntry } from './bmc/power-sweep.js';
import type { TunnelStatus } from './ssh/index.js';
import type { AgentStatusReport, BmcReachability, DhcpServiceStatus, ImageDownloadStatus, RamdiskBuildReport, SshStatus, TransferServiceStatus } from './web/ui/index.js';
import { isJsonObject } from './json-value.js';

/** Facts about the boot services that their counters do not carry (from the config). */
export interface BootServicesConfig {
  /** `dhcp.mode`. */
  dhcpMode: 'full' | 'proxy' | 'off';
  /** `provisioning.interface` and `provisioning.address` (for the DHCP note). */
  dhcpInterface?: string;
  dhcpAddress?: string;
  /** Addresses in every `dhcp.range` together ({@link countPoolAddresses}); gives "free". */
  dhcpPoolAddresses?: number;
  /** `dhcp6.mode` (left out without a `dhcp6` section), the agent's IPv6 address, and the addresses in every `dhcp6.range`. */
  dhcp6Mode?: 'full' | 'off';
  dhcp6Address?: string;
  dhcp6PoolAddresses?: number;
  /** `http.listen` / `tftp.listen` as `address:port`. */
  httpListen?: string;
  tftpListen?: string;
}

/** One host's BMC and what the power sweep last saw of it (`undefined` = not queried yet). */
export interface BmcObservation {
  host: string;
  /** `spec.bmc.address`; user-info is removed before it is reported. */
  address: string;
  entry: PowerSweepEntry | undefined;
}

/** One download into the image cache, as `ImageCache.get`'s progress callback reports it. */
export interface ImageDownloadInput {
  url: string;
  /** `download`, `convert`, `hash` are images' `ImageProgress.phase`; the rest are around it. */
  phase: 'queued' | 'download' | 'convert' | 'hash' | 'done' | 'failed';
  bytes: number;
  totalBytes: number | null;
  error?: string;
}

/** The body of `GET /api/v1/ssh` (agent/main.ts), plus the open session count when known. */
export interface SshSourceStatus {
  server: { address: string; port: number; fingerprint: string } | null;
  tunnel: TunnelStatus | null;
  /** Authenticated sessions open now; the SSH server does not report it yet (then 0). */
  sessions?: number;
}

/** Where {@link createStatusReporter} reads each section; all optional. */
export interface StatusReportSources {
  /** `BootServices.stats()`: `{ http, dhcp, recorder, tftp? }`. */
  boot?: () => Record<string, unknown>;
  /** Needed with `boot` for the DHCP mode; without it the mode is read as `full` when DHCP runs. */
  bootConfig?: BootServicesConfig;
  bmc?: () => readonly BmcObservation[] | Promise<readonly BmcObservation[]>;
  images?: () => readonly ImageDownloadInput[];
  /** Every architecture's ramdisk build, the head node's first: `bootServices.ramdisks`, and the first as `bootServices.ramdisk`. */
  ramdisks?: () => RamdiskBuildReport[];
  ssh?: () => SshSourceStatus;
  /** Milliseconds clock for throughput (the agent passes `Date.now`). */
  nowMs: () => number;
  /** Called when a source throws; that section is then left out of the report. */
  onError?: (section: 'bootServices' | 'bmc' | 'images' | 'ssh', err: unknown) => void;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return isJsonObject(value) ? value : undefined;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

function sumWhere(counts: unknown, keep: (key: string) => boolean): number {
  return Object.entries(record(counts) ?? {}).reduce((sum, [key, n]) => (keep(key) ? sum + count(n) : sum), 0);
}

function ipv4ToNumber(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** Addresses in `dhcp.range` pools (`first`..`last` inclusive, IPv4); malformed or reversed ranges count 0. */
export function countPoolAddresses(ranges: readonly { first: string; last: string }[]): number {
  return ranges.reduce((sum, r) => {
    const first = ipv4ToNumber(r.first);
    const last = ipv4ToNumber(r.last);
    return first === undefined || last === undefined || last < first ? sum : sum + last - first + 1;
  }, 0);
}

/**
 * The DHCP line from the server's `DhcpServerStats` (bootsvc/dhcp/server-events.ts): leases used =
 * records in the lease table (bound, offered and quarantined addresses), free = pool − used.
 * A configured mode whose stats read `{ mode: 'off' }` means the server was not started.
 */
export function mapDhcpStatus(stats: unknown, config: BootServicesConfig | undefined): DhcpServiceStatus | undefined {
  const s = record(stats);
  if (s === undefined) return undefined;
  const running = record(s.leases) !== undefined || record(s.received) !== undefined;
  const mode = config?.dhcpMode ?? (running ? 'full' : 'off');
  if (mode === 'off') return { mode: 'off', healthy: true };
  if (!running) return { mode, healthy: false, message: 'not running: provisioning.interface and provisioning.address are needed' };
  const notes: string[] = [];
  if (config?.dhcpInterface !== undefined) notes.push(`on ${config.dhcpInterface}${config.dhcpAddress === undefined ? '' : ` (${config.dhcpAddress})`}`);
  const leases = record(s.leases) ?? {};
  const writeErrors = count(leases.writeErrors);
  if (writeErrors > 0) notes.push(`${writeErrors} lease writes failed`);
  const lookupErrors = count(s.lookupErrors);
  if (lookupErrors > 0) notes.push(`${lookupErrors} boot lookups failed`);
  const status: DhcpServiceStatus = { mode, healthy: true };
  if (notes.length > 0) status.message = notes.join(' · ');
  if (mode === 'full') {
    status.leasesUsed = count(leases.records);
    if (config?.dhcpPoolAddresses !== undefined) status.leasesFree = Math.max(0, config.dhcpPoolAddresses - status.leasesUsed);
  }
  return status;
}

/**
 * The DHCPv6 line from the server's `Dhcp6ServerStats` (bootsvc/dhcp6/dhcp6-server.ts) as
 * agent/boot/boot-services6.ts returns it: leases used = records in its lease table, free =
 * pool − used, and the router advertisements sent when the agent sends them. Undefined without
 * a `dhcp6` section.
 */
export function mapDhcp6Status(stats: unknown, config: BootServicesConfig | undefined): DhcpServiceStatus | undefined {
  const mode = config?.dhcp6Mode;
  if (mode === undefined) return undefined;
  if (mode === 'off') return { mode: 'off', healthy: true };
  const s = record(stats);
  const leases = record(s?.leases);
  if (s === undefined || leases === undefined) return { mode, healthy: false, message: 'not running: provisioning.interface, an IPv6 provisioning.address and dhcp6.range are needed' };
  const notes: string[] = [];
  if (config?.dhcpInterface !== undefined) notes.push(`on ${config.dhcpInterface}${config.dhcp6Address === undefined ? '' : ` (${config.dhcp6Address})`}`);
  const ra = record(s.routerAdvertisements);
  if (ra !== undefined) notes.push(`${count(ra.unsolicitedSent) + count(ra.solicitedSent)} router advertisements sent`);
  const writeErrors = count(leases.writeErrors);
  if (writeErrors > 0) notes.push(`${writeErrors} lease writes failed`);
  const status: DhcpServiceStatus = { mode, healthy: true, message: notes.join(' · '), leasesUsed: count(leases.records) };
  if (status.message === '') delete status.message;
  if (config?.dhcp6PoolAddresses !== undefined) status.leasesFree = Math.max(0, config.dhcp6PoolAddresses - count(leases.records));
  return status;
}

/** A byte counter at a time, for throughput between two reports. */
export interface ByteSample {
  bytes: number;
  atMs: number;
}

/** Bytes per second between two samples; undefined without an earlier one, or when the counter went back (restart). */
export function rateBetween(previous: ByteSample | undefined, current: ByteSample): number | undefined {
  if (previous === undefined || current.atMs <= previous.atMs || current.bytes < previous.bytes) return undefined;
  return ((current.bytes - previous.bytes) * 1000) / (current.atMs - previous.atMs);
}

/**
 * Boot HTTP from `BootHttpStats` (bootsvc/http/boot-http-server.ts): in flight = responses in
 * progress, completed = 2xx/3xx responses, failed = aborted responses plus lookup/render
 * errors. `bytes` counts a response when it ends, so a long download shows in the rate at its end.
 */
export function mapHttpStatus(stats: unknown, listen: string | undefined, bytesPerSecond: number | undefined): TransferServiceStatus | undefined {
  const s = record(stats);
  if (s === undefined) return undefined;
  const status: TransferServiceStatus = {
    healthy: true,
    transfersInFlight: count(s.active),
    completed: sumWhere(s.byStatus, (code) => /^[23]\d\d$/.test(code)),
    failed: count(s.aborted) + count(s.errors),
  };
  if (listen !== undefined) status.listen = listen;
  if (bytesPerSecond !== undefined) status.bytesPerSecond = bytesPerSecond;
  if (count(s.errors) > 0) status.message = `${count(s.errors)} boot lookups or renderings failed`;
  return status;
}

/** TFTP from `TftpServerStats` (bootsvc/tftp/server-types.ts); `bytesSent` counts finished transfers. */
export function mapTftpStatus(stats: unknown, listen: string | undefined, bytesPerSecond: number | undefined): TransferServiceStatus | undefined {
  const s = record(stats);
  if (s === undefined) return undefined;
  const status: TransferServiceStatus = {
    healthy: true,
    transfersInFlight: count(s.activeTransfers),
    completed: count(s.completedTransfers),
    failed: count(s.failedTransfers),
  };
  if (listen !== undefined) status.listen = listen;
  if (bytesPerSecond !== undefined) status.bytesPerSecond = bytesPerSecond;
  const busy = count(s.busyDrops);
  if (busy > 0) status.message = `${busy} requests dropped at the transfer limit`;
  return status;
}

const BMC_ERROR_LABELS: Record<string, string> = {
  RACKSIDE_ERR_BMC_UNREACHABLE: 'unreachable',
  RACKSIDE_ERR_BMC_AUTH: 'credentials rejected',
  RACKSIDE_ERR_BMC_TIMEOUT: 'timed out',
  RACKSIDE_ERR_BMC_PROTOCOL: 'unexpected answer',
  RACKSIDE_ERR_BMC_BUSY: 'busy',
  RACKSIDE_ERR_BMC_UNSUPPORTED: 'unsupported',
  RACKSIDE_ERR_BMC_NO_DRIVER: 'no driver',
};

/** `user:password@` removed from a URL-ish BMC address (metal3 addresses normally have none). */
export function stripUserInfo(address: string): string {
  return address.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}

/**
 * Reachability of each BMC the sweep has answered for (hosts not queried yet are left out): any
 * failed query — credentials rejected included, as the BMC cannot be used — is unreachable, with
 * the error labelled by its `BmcError` code. `since` is the first sweep that saw the current
 * reachability, per `previous` (host → reachable and since, updated in place).
 */
export function mapBmcReachability(observations: readonly BmcObservation[], previous: Map<string, { reachable: boolean; sinceMs: number }>): BmcReachability[] {
  const seen = new Set<string>();
  const list: BmcReachability[] = [];
  for (const { host, address, entry } of observations) {
    if (entry === undefined) continue;
    seen.add(host);
    const reachable = entry.error === undefined;
    const before = previous.get(host);
    const sinceMs = before !== undefined && before.reachable === reachable ? before.sinceMs : entry.checkedAt;
    previous.set(host, { reachable, sinceMs });
    const item: BmcReachability = { host, address: stripUserInfo(address), reachable, since: new Date(sinceMs).toISOString() };
    if (entry.error !== undefined) {
      const label = entry.error.code === undefined ? undefined : BMC_ERROR_LABELS[entry.error.code];
      item.lastError = label === undefined ? entry.error.message : `${label}: ${entry.error.message}`;
    }
    list.push(item);
  }
  for (const host of [...previous.keys()]) if (!seen.has(host)) previous.delete(host);
  return list.sort((a, b) => a.host.localeCompare(b.host));
}

/** A download URL without user-info, query (pre-signed signatures) or fragment. */
export function redactImageUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

const IMAGE_STATE: Record<ImageDownloadInput['phase'], ImageDownloadStatus['state']> = {
  queued: 'queued',
  download: 'downloading',
  convert: 'verifying',
  hash: 'verifying',
  done: 'done',
  failed: 'failed',
};

/** The page's download rows; `convert` and `hash` both read as `verifying`. */
export function mapImageDownloads(downloads: readonly ImageDownloadInput[]): ImageDownloadStatus[] {
  return downloads.map((d) => {
    const item: ImageDownloadStatus = { url: redactImageUrl(d.url), state: IMAGE_STATE[d.phase], bytesDone: count(d.bytes) };
    if (d.totalBytes !== null && d.totalBytes > 0) item.bytesTotal = d.totalBytes;
    if (d.error !== undefined) item.error = d.error;
    return item;
  });
}

/** `address:port`, IPv6 in brackets. */
export function formatListen(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/**
 * The SSH section from `GET /api/v1/ssh`'s body: the tunnel's `backoff` reads as `down`; a
 * `disabled` tunnel without a bastion is left out ("not configured"), and so is the whole section
 * when neither the server nor a tunnel runs.
 */
export function mapSshStatus(source: SshSourceStatus): SshStatus | undefined {
  const ssh: SshStatus = {};
  if (source.server !== null) ssh.server = { listen: formatListen(source.server.address, source.server.port), sessions: source.sessions ?? 0 };
  const t = source.tunnel;
  if (t !== null && !(t.state === 'disabled' && t.bastion === undefined)) {
    const tunnel: NonNullable<SshStatus['tunnel']> = {
      bastion: t.bastion ?? '(unknown bastion)',
      state: t.state === 'backoff' ? 'down' : t.state,
      since: t.since,
    };
    if (t.lastError !== undefined) tunnel.lastError = t.lastError;
    ssh.tunnel = tunnel;
  }
  return ssh.server === undefined && ssh.tunnel === undefined ? undefined : ssh;
}

/**
 * Creates the `/api/v1/status` provider: each call reads every source once and maps it; a
 * source that throws is reported through `onError` and its section left out. Throughput is
 * measured between calls at least a second apart (the previous rate is kept in between).
 */
export function createStatusReporter(sources: StatusReportSources): () => Promise<AgentStatusReport> {
  const rates = new Map<string, { sample: ByteSample; rate: number | undefined }>();
  const bmcSeen = new Map<string, { reachable: boolean; sinceMs: number }>();
  const rateOf = (key: string, bytes: unknown, nowMs: number): number | undefined => {
    const sample = { bytes: count(bytes), atMs: nowMs };
    const last = rates.get(key);
    if (last !== undefined && nowMs - last.sample.atMs < 1000 && sample.bytes >= last.sample.bytes) return last.rate;
    const rate = rateBetween(last?.sample, sample);
    rates.set(key, { sample, rate });
    return rate;
  };
  const guarded = async <T>(section: 'bootServices' | 'bmc' | 'images' | 'ssh', read: () => T | Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (err) {
      sources.onError?.(section, err);
      return undefined;
    }
  };
  return async () => {
    const report: AgentStatusReport = {};
    const nowMs = sources.nowMs();
    const boot = sources.boot;
    if (boot !== undefined) {
      const stats = await guarded('bootServices', boot);
      if (stats !== undefined) {
        const config = sources.bootConfig;
        const http = mapHttpStatus(stats.http, config?.httpListen, rateOf('http', record(stats.http)?.bytes, nowMs));
        const tftp = mapTftpStatus(stats.tftp, config?.tftpListen, rateOf('tftp', record(stats.tftp)?.bytesSent, nowMs));
        const dhcp = mapDhcpStatus(stats.dhcp, config);
        const dhcp6 = mapDhcp6Status(stats.dhcp6, config);
        report.bootServices = { ...(dhcp === undefined ? {} : { dhcp }), ...(dhcp6 === undefined ? {} : { dhcp6 }), ...(tftp === undefined ? {} : { tftp }), ...(http === undefined ? {} : { http }) };
      }
    }
    const ramdisks = sources.ramdisks === undefined ? undefined : await guarded('bootServices', sources.ramdisks);
    const head = ramdisks?.[0];
    if (ramdisks !== undefined && head !== undefined) report.bootServices = { ...report.bootServices, ramdisk: { ...head }, ramdisks: ramdisks.map((r) => ({ ...r })) };
    const bmc = sources.bmc;
    if (bmc !== undefined) {
      const observations = await guarded('bmc', bmc);
      if (observations !== undefined) report.bmc = mapBmcReachability(observations, bmcSeen);
    }
    const images = sources.images;
    if (images !== undefined) {
      const downloads = await guarded('images', images);
      if (downloads !== undefined) report.images = mapImageDownloads(downloads);
    }
    const ssh = sources.ssh;
    if (ssh !== undefined) {
      const status = await guarded('ssh', ssh);
      const mapped = status === undefined ? undefined : mapSshStatus(status);
      if (mapped !== undefined) report.ssh = mapped;
    }
    return report;
  };
}
