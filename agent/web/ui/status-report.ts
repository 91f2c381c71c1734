/**
 * @module The optional `GET /api/v1/status` document the rack view's service panels read:
 * boot services (DHCP leases, TFTP and HTTP transfers and throughput), BMC reachability, image
 * downloads and the SSH server/tunnel. Every section is optional — the page shows "not
 * configured" for a missing one — so the agent can fill them in as those parts land. Controller
 * sync is read from `GET /api/v1/sync` (agent/sync) and is not repeated here.
 * @pure
 */

/** DHCP server health (`dhcp.mode`, lease pool use); the DHCPv6 server's too (`dhcp6.mode`, `full` or `off`). */
export interface DhcpServiceStatus {
  mode: 'full' | 'proxy' | 'off';
  healthy: boolean;
  /** Why it is unhealthy, or a short note (`listening on eth1:67`). */
  message?: string;
  leasesUsed?: number;
  leasesFree?: number;
}

/** A transfer service (TFTP or boot HTTP). */
export interface TransferServiceStatus {
  healthy: boolean;
  message?: string;
  /** `address:port` it listens on. */
  listen?: string;
  transfersInFlight: number;
  /** Recent throughput of all transfers together. */
  bytesPerSecond?: number;
  /** Transfers completed / failed since start. */
  completed?: number;
  failed?: number;
}

/** The agent's background ramdisk build (agent/provisioner/local/ramdisk-builds.ts). */
export interface RamdiskBuildReport {
  /** The Debian architecture built (`amd64`, `arm64`). */
  arch?: string;
  state: 'checking' | 'building' | 'ready' | 'failed';
  format?: 'initrd' | 'iso';
  step?: number;
  total?: number;
  percent?: number;
  /** Progress, the build served, or why the build failed. */
  message: string;
  /** A failed build: what to do. */
  fix?: string;
  lastBuildSeconds?: number;
  since: string;
}

/** One host's BMC as last seen. */
export interface BmcReachability {
  host: string;
  address: string;
  reachable: boolean;
  /** RFC 3339 time the current reachability began. */
  since?: string;
  lastError?: string;
}

/** One OS-image or ramdisk download into the image cache. */
export interface ImageDownloadStatus {
  url: string;
  state: 'queued' | 'downloading' | 'verifying' | 'done' | 'failed';
  bytesDone: number;
  bytesTotal?: number;
  error?: string;
}

/** The embedded SSH server and the optional reverse tunnel to a bastion. */
export interface SshStatus {
  server?: { listen: string; sessions: number };
  tunnel?: {
    bastion: string;
    state: 'connected' | 'connecting' | 'down' | 'disabled';
    since?: string;
    lastError?: string;
  };
}

/** The body of `GET /api/v1/status`; each absent section reads "not configured". */
export interface AgentStatusReport {
  bootServices?: {
    dhcp?: DhcpServiceStatus;
    /** The DHCPv6 server (docs/ipv6.md), when a `dhcp6` section is configured. */
    dhcp6?: DhcpServiceStatus;
    tftp?: TransferServiceStatus;
    http?: TransferServiceStatus;
    /** The head node's ramdisk build. */
    ramdisk?: RamdiskBuildReport;
    /** Every architecture's build so far, the head node's first (another is built when a host of it needs one). */
    ramdisks?: RamdiskBuildReport[];
  };
  bmc?: BmcReachability[];
  images?: ImageDownloadStatus[];
  ssh?: SshStatus;
}

/** Formats a byte rate: `0 B/s`, `12.4 MB/s` (decimal units, as network rates are quoted). */
export function formatRate(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

/** Formats a byte count with decimal units: `512 B`, `1.5 kB`, `2.25 GB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${units[unit] ?? 'B'}`;
}

/** Fraction done of a download in [0, 1], or undefined when the total is unknown. */
export function downloadFraction(download: ImageDownloadStatus): number | undefined {
  if (download.bytesTotal === undefined || download.bytesTotal <= 0) return undefined;
  return Math.min(1, Math.max(0, download.bytesDone / download.bytesTotal));
}
