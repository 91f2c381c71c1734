/**
 * @module The vocabulary of `rackside doctor`: one {@link CheckResult} per table line, and the
 * probe results the I/O layer (probes.ts, probe-net.ts) hands to the pure decisions
 * (checks.ts, checks-host.ts). Probes only observe; every judgement lives in the checks.
 * @pure
 */
import type { BootAssetGroup, Dhcp6Advertise, Interface6Address, InterfaceAddress } from '../../bootsvc/index.js';

export type { Dhcp6Advertise };
import type { Config } from '../config.js';

/** Outcome of one check. `warn` and `skip` never fail the run; `fail` makes the exit code 1. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One line of the doctor table: CHECK | RESULT | DETAIL | FIX. `fix` is '' when nothing is to do. */
export interface CheckResult {
  check: string;
  status: CheckStatus;
  detail: string;
  fix: string;
}

/** What reading and decoding the config file gave. */
export type ConfigProbe =
  | { path: string; state: 'ok'; config: Config }
  | { path: string; state: 'missing' }
  | { path: string; state: 'unreadable'; error: string }
  | { path: string; state: 'invalid'; error: string };

/** An IPv4 address on an interface. */
export type { InterfaceAddress } from '../../bootsvc/index.js';

/** What the system says about the provisioning interface (/sys/class/net and getifaddrs). */
export interface InterfaceProbe {
  name: string;
  exists: boolean;
  /** `/sys/class/net/<name>/operstate`: up, down, unknown, lowerlayerdown … (RFC 2863 ifOperStatus) */
  operState?: string;
  /** IFF_UP from `/sys/class/net/<name>/flags`: false after `ip link set NAME down`. */
  adminUp?: boolean;
  /** Hardware address, `aa:bb:cc:dd:ee:ff`. */
  mac?: string;
  addresses: InterfaceAddress[];
  /** IPv6 addresses (`ip -6 addr`), link-local and tentative ones included; absent when not probed. */
  addresses6?: Interface6Address[];
}

/** A process holding a socket, from `ss -p` and /proc/PID/cmdline. */
export interface PortHolder {
  command: string;
  pid?: number;
  /** The local address as `ss` prints it, e.g. `0.0.0.0:67`. */
  local?: string;
  /** SO_BINDTODEVICE interface (`0.0.0.0%eth0:67` in `ss`), when bound to one. */
  device?: string;
  /** The full command line (NUL bytes as spaces), when /proc could be read. */
  cmdline?: string;
}

/** The result of trying to bind one port, plus who holds it when it is taken. */
export interface PortProbe {
  protocol: 'udp' | 'tcp';
  address: string;
  port: number;
  /** free: bound and released; in-use: EADDRINUSE; denied: EACCES/EPERM (not root); error: anything else. */
  bind: 'free' | 'in-use' | 'denied' | 'error';
  error?: string;
  holders: PortHolder[];
}

/** One DHCPOFFER heard in answer to the probe's DISCOVER. */
export interface DhcpOffer {
  /** Option 54 (RFC 2132 §9.7); undefined when the server sent none. */
  serverId?: string;
  /** IP source address of the datagram. */
  sourceAddress: string;
  /** yiaddr: the address offered (0.0.0.0 from a proxyDHCP server). */
  offeredAddress: string;
  /** Boot file (option 67 or the `file` field), when given. */
  bootFile?: string;
}

/** The rogue-DHCP probe: a DISCOVER broadcast from the provisioning interface and the offers heard. */
export type DhcpProbe =
  | { state: 'done'; interface: string; listenMs: number; offers: DhcpOffer[] }
  | { state: 'not-run'; reason: string }
  | { state: 'error'; error: string };

/** The rogue-DHCPv6 probe: a Solicit to ff02::1:2 from the provisioning interface and the Advertises heard. */
export type Dhcp6Probe =
  | { state: 'done'; interface: string; listenMs: number; advertises: Dhcp6Advertise[] }
  | { state: 'not-run'; reason: string }
  | { state: 'error'; error: string };

/** One boot asset of bootsvc's catalog, found (with its checksum) or not. */
export interface AssetProbe {
  name: string;
  group: BootAssetGroup;
  package: string;
  path?: string;
  sha256?: string;
}

/** A file the ramdisk needs (kernel, busybox), as found. */
export interface FileProbe {
  /** Where it was looked for or found. */
  path?: string;
  sha256?: string;
  /** Where it came from: `config` (images.ramdisk.kernel), `cache` (images cache), `system` (/bin/busybox). */
  source?: 'config' | 'cache' | 'system';
  /** For busybox: whether the ELF has no program interpreter (statically linked). */
  isStatic?: boolean;
  /** Why it could not be read, when it exists but is unusable. */
  error?: string;
}

/**
 * The agent's background ramdisk build as it left it: the status file
 * `<images.cacheDir>/ramdisk-build.json` (agent/provisioner/local/ramdisk-builds.ts) and the
 * manifest of the build on disk.
 */
export interface RamdiskBuildProbe {
  /** The status file, when there is one. */
  status?: { state: string; message: string; fix?: string; since?: string; step?: number; total?: number; percent?: number };
  /** The build in `<images.cacheDir>/ramdisk`, when its manifest reads. */
  built?: { format: string; kernelRelease: string };
  /** Where they were looked for. */
  dir: string;
}

/** The state directory: a create+fsync+remove test, ownership, and its newest file (for the clock check). */
export interface StateDirProbe {
  path: string;
  exists: boolean;
  writable: boolean;
  error?: string;
  ownerUid?: number;
  /** uid of the `rackside` system user, when it exists. */
  agentUid?: number;
  newestMtimeMs?: number;
  newestPath?: string;
}

/** The erase record signing key in the state directory (agent/erase/open.ts). */
export interface EraseKeyProbe {
  path: string;
  exists: boolean;
  /** Permission bits, when it exists. */
  mode?: number;
  /** `SHA256:…` of its public key, when it could be read. */
  fingerprint?: string;
  /** Why it cannot be used, when it exists but is unreadable or not an ed25519 OpenSSH key. */
  error?: string;
}

/** A HEAD request to the controller URL. */
export type ControllerProbe =
  | { state: 'not-configured' }
  | { state: 'reachable'; url: string; httpStatus: number }
  | { state: 'error'; url: string; code: string; message: string };

/** One BMC reachability test. */
export interface BmcReachability {
  host: string;
  /** The BMC address with credentials redacted. */
  address: string;
  /** `hostname:port` tried. */
  target: string;
  protocol: 'tcp' | 'udp';
  reachable: boolean;
  error?: string;
}

/** BMCs listed by the running agent's management API, each tested. */
export type BmcProbe =
  | { state: 'no-api'; server: string; error: string }
  | { state: 'done'; server: string; results: BmcReachability[]; invalid: { host: string; error: string }[] };

/**
 * Boot HTTPS as the doctor finds it (`http.tls`, docs/https-boot.md): the listener's certificate
 * — the operator's file, or the one the agent issued from its boot CA — and, with
 * `http.tlsBoot: on`, the systemd-boot stub unified images are built from.
 */
export interface BootHttpsProbe {
  /** Where the server certificate was looked for. */
  certPath: string;
  /** The certificate, when it reads and parses. */
  certificate?: {
    subject: string;
    /** Expiry, RFC 3339. */
    validTo: string;
    daysLeft: number;
    /** Whether it is valid for the boot URL's host (IP or DNS name), as firmware checks it. */
    coversBootHost: boolean;
  };
  /** Why the certificate could not be read or parsed (a missing auto certificate is not an error). */
  error?: string;
  /** The stub's path, and whether it is there (probed only with `http.tlsBoot: on`). */
  stub?: { path: string; present: boolean };
}
