/**
 * @module Escaping for the boot-loader languages rackside renders: iPXE scripts, GRUB
 * configs and Linux kernel command lines, plus boot URL resolution and MAC spellings.
 *
 * - **iPXE** has no quoting: `split_command()` in iPXE's core/exec.c splits every line on
 *   whitespace, `${…}` anywhere is a settings expansion, and a token that is exactly `&&` or `||`
 *   is an operator. So an iPXE argument cannot contain whitespace, control characters or `${`,
 *   and must not be `&&`/`||`; {@link ipxeArg} refuses those instead of guessing.
 * - **GRUB** script is shell-like: single quotes protect everything but `'` itself, which is
 *   written `'\''` ({@link grubArg}).
 * - **Linux** splits its command line on spaces (double quotes group, no escapes) and keeps at
 *   most COMMAND_LINE_SIZE = 2048 bytes on x86 and arm64 ({@link kernelCommandLine}).
 * @pure
 */

/** A value that cannot be put into a boot script safely (the message names it and why). */
export class BootRenderError extends Error {
  readonly code = 'RACKSIDE_ERR_BOOT_RENDER';
  constructor(message: string) {
    super(message);
    this.name = 'BootRenderError';
  }
}

/** Linux COMMAND_LINE_SIZE on x86 and arm64, including the terminating NUL. */
export const KERNEL_COMMAND_LINE_MAX_BYTES = 2048;

// Whitespace, C0/C1 controls and DEL: token separators or unprintable on a firmware console.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_CHARS = /[\s\u0000-\u001f\u007f-\u009f]/;

/** Returns `value` as one iPXE token; throws {@link BootRenderError} when iPXE would split or expand it. */
export function ipxeArg(value: string, what = 'argument'): string {
  if (value === '') throw new BootRenderError(`${what} is empty`);
  if (UNSAFE_CHARS.test(value)) throw new BootRenderError(`${what} ${JSON.stringify(value)} contains whitespace or control characters, which iPXE cannot quote`);
  if (value.includes('${')) throw new BootRenderError(`${what} ${JSON.stringify(value)} contains "\${", which iPXE would expand as a setting`);
  if (value === '&&' || value === '||') throw new BootRenderError(`${what} ${JSON.stringify(value)} is an iPXE operator`);
  return value;
}

/**
 * Returns free text (a message for `echo`) made harmless for iPXE: non-printable and non-ASCII
 * characters become `?`, `${` loses its brace, and operator tokens are spelled out.
 */
export function ipxeText(text: string): string {
  return text
    .replace(/[^\x20-\x7e]/g, '?')
    .replaceAll('${', '$ {')
    .split(' ')
    .map((word) => (word === '&&' ? 'and' : word === '||' ? 'or' : word))
    .join(' ');
}

const GRUB_BARE = /^[A-Za-z0-9_./:=,+@%-]+$/;

/** Returns `value` as one GRUB script word, single-quoted unless it is plainly safe. */
export function grubArg(value: string): string {
  if (GRUB_BARE.test(value)) return value;
  if (UNSAFE_CHARS.test(value.replaceAll(' ', ''))) throw new BootRenderError(`${JSON.stringify(value)} contains control characters`);
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** Returns free text for a GRUB `echo`, single-quoted, non-printable characters as `?`. */
export function grubText(text: string): string {
  return grubArg(text.replace(/[^\x20-\x7e]/g, '?'));
}

/**
 * Validates kernel parameters and joins them with spaces. Each must be one word (the kernel
 * would split it otherwise; iPXE could not carry a quoted space anyway) without quotes or
 * backslashes, and the whole line must fit COMMAND_LINE_SIZE.
 */
export function kernelCommandLine(params: readonly string[]): string {
  for (const p of params) {
    ipxeArg(p, 'kernel parameter');
    if (/["'\\]/.test(p)) throw new BootRenderError(`kernel parameter ${JSON.stringify(p)} contains a quote or backslash`);
  }
  const line = params.join(' ');
  if (new TextEncoder().encode(line).length >= KERNEL_COMMAND_LINE_MAX_BYTES) {
    throw new BootRenderError(`kernel command line is longer than ${KERNEL_COMMAND_LINE_MAX_BYTES - 1} bytes`);
  }
  return line;
}

/** Returns `mac` (any case, `:` or `-`) in lower-case colon form, or throws. */
export function canonicalMac(mac: string): string {
  if (!/^[0-9a-f]{2}([:-][0-9a-f]{2}){5}$/i.test(mac)) throw new BootRenderError(`${JSON.stringify(mac)} is not a MAC address`);
  return mac.toLowerCase().replaceAll('-', ':');
}

/** Returns `mac` in the hyphen form used in boot URLs (`52-54-00-12-34-56`, iPXE's `:hexhyp`). */
export function hyphenMac(mac: string): string {
  return canonicalMac(mac).replaceAll(':', '-');
}

/** Encodes a boot-server path segment by segment (`/ramdisk/vm linuz` → `/ramdisk/vm%20linuz`). */
export function encodeBootPath(path: string): string {
  return `/${path.split('/').filter((s) => s !== '').map((s) => encodeURIComponent(s)).join('/')}`;
}

/**
 * Resolves `pathOrUrl` against the boot HTTP base URL: an absolute `http(s)://` URL is
 * normalized and kept, a path is appended to `baseUrl` (path-encoded). Other schemes throw.
 */
export function resolveBootUrl(baseUrl: string, pathOrUrl: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(pathOrUrl)) {
    let url: URL;
    try {
      url = new URL(pathOrUrl);
    } catch {
      throw new BootRenderError(`${JSON.stringify(pathOrUrl)} is not a valid URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BootRenderError(`${JSON.stringify(pathOrUrl)}: only http and https URLs can be booted`);
    return url.href;
  }
  return `${baseUrl.replace(/\/+$/, '')}${encodeBootPath(pathOrUrl)}`;
}

/** Returns the boot script URL of `mac`: `<base>/boot/<hyphen-mac>.ipxe`. */
export function scriptUrlFor(baseUrl: string, mac: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/boot/${hyphenMac(mac)}.ipxe`;
}
