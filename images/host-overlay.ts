/**
 * @module Per-host data for the shared ramdisk: a tiny uncompressed cpio appended after the
 * base initrd, so one build serves every host (never a full rebuild per host). The kernel
 * unpacks concatenated archives in order, later files overriding earlier ones
 * (`Documentation/driver-api/early-userspace/buffer-format.rst`); an uncompressed member
 * that follows a compressed one must start on a 4-byte boundary of the whole image, which
 * {@link concatInitrds} guarantees with zero padding (the kernel skips zero bytes between members).
 *
 * The agent reads `/etc/rackside/url`, `token` and `network_data.json` with `read -r`; nothing
 * in the overlay is ever sourced by the shell, so a value cannot inject commands.
 * @pure
 */
import { encodeCpio, type CpioEntry } from './cpio.js';

/** What one host's ramdisk needs to find rackside. */
export interface HostOverlayOptions {
  /** Base URL of rackside's boot HTTP server, e.g. `http://192.0.2.1:8081`. */
  agentUrl: string;
  /** The host's ramdisk token (sent as `Authorization: Bearer …`). */
  token: string;
  /** Preprovisioning network data (OpenStack `network_data.json` shape), or omitted for DHCP. */
  networkData?: unknown;
  /** mtime of the members (defaults to 0: the overlay is content-addressed). */
  mtimeSeconds?: number;
}

/** Thrown for an agent URL or token that cannot be passed to the ramdisk safely. */
export class HostOverlayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HostOverlayError';
  }
}

/** Characters allowed in a token: URL-safe base64, hex and `.`/`~` — safe on a kernel command line and in a header. */
const tokenPattern = /^[A-Za-z0-9._~-]{16,512}$/;

/** Returns `url` without a trailing slash after checking it is an absolute http(s) URL with no whitespace or quotes. */
export function validateAgentUrl(url: string): string {
  if (!/^https?:\/\/[^\s"'`\\$]+$/.test(url)) {
    throw new HostOverlayError(`agent URL must be an absolute http(s) URL without spaces or quotes, got ${JSON.stringify(url)}`);
  }
  return url.replace(/\/+$/, '');
}

/** Returns `token` after checking it has 16–512 characters of `[A-Za-z0-9._~-]`. */
export function validateRamdiskToken(token: string): string {
  if (!tokenPattern.test(token)) throw new HostOverlayError('ramdisk token must be 16-512 characters of [A-Za-z0-9._~-]');
  return token;
}

/**
 * Returns an uncompressed newc archive with `etc/rackside/url`, `etc/rackside/token` (0600)
 * and, when given, `etc/rackside/network_data.json`; throws {@link HostOverlayError} for an
 * unsafe URL or token.
 */
export function buildHostOverlay(options: HostOverlayOptions): Buffer {
  const url = validateAgentUrl(options.agentUrl);
  const token = validateRamdiskToken(options.token);
  const entries: CpioEntry[] = [
    { type: 'directory', path: 'etc', mode: 0o755 },
    { type: 'directory', path: 'etc/rackside', mode: 0o755 },
    { type: 'file', path: 'etc/rackside/url', mode: 0o644, data: Buffer.from(`${url}\n`) },
    { type: 'file', path: 'etc/rackside/token', mode: 0o600, data: Buffer.from(`${token}\n`) },
  ];
  if (options.networkData !== undefined) {
    const json = JSON.stringify(options.networkData);
    if (typeof json !== 'string') throw new HostOverlayError('networkData must be JSON-serializable');
    entries.push({ type: 'file', path: 'etc/rackside/network_data.json', mode: 0o644, data: Buffer.from(`${json}\n`) });
  }
  return encodeCpio(entries, { mtimeSeconds: options.mtimeSeconds ?? 0 });
}

/** Where the ramdisk finds the CA it verifies rackside's boot HTTPS certificate with (`CA` in images/ramdisk/rackside-agent.sh). */
export const RAMDISK_CA_PATH = 'etc/rackside/ca.pem';

/**
 * Returns an uncompressed newc archive holding `caPem` at {@link RAMDISK_CA_PATH}: what the
 * ramdisk's curl verifies rackside's boot HTTPS listener against when `rackside.url` is
 * `https://` (a unified image appends it to its initrds, docs/https-boot.md). Throws
 * {@link HostOverlayError} when `caPem` holds no PEM certificate.
 */
export function buildCaOverlay(caPem: string, mtimeSeconds = 0): Buffer {
  const certificates = caPem.match(/-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----/g) ?? [];
  if (certificates.length === 0) throw new HostOverlayError('the ramdisk CA must hold at least one PEM certificate');
  return encodeCpio([
    { type: 'directory', path: 'etc', mode: 0o755 },
    { type: 'directory', path: 'etc/rackside', mode: 0o755 },
    { type: 'file', path: RAMDISK_CA_PATH, mode: 0o644, data: Buffer.from(`${certificates.join('\n')}\n`) },
  ], { mtimeSeconds });
}

/** Returns the parts concatenated, each padded with zeros to a 4-byte boundary, as one initrd image. */
export function concatInitrds(parts: readonly Uint8Array[]): Buffer {
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    chunks.push(p);
    const pad = (4 - (p.length % 4)) % 4;
    if (pad > 0) chunks.push(new Uint8Array(pad));
  }
  return Buffer.concat(chunks);
}

/** Returns the kernel command-line arguments that carry the agent URL and token (an alternative to the overlay). */
export function ramdiskKernelArgs(options: { agentUrl: string; token: string }): string[] {
  return [`rackside.url=${validateAgentUrl(options.agentUrl)}`, `rackside.token=${validateRamdiskToken(options.token)}`];
}
