/**
 * @module The name of a discovered BareMetalHost (docs/discovery.md, "What is stored"): a DNS-1123 label
 * from the system serial number when it is a real one, else `host-` and the boot MAC's 12 hex
 * digits. A serial name already taken gets `-` and the MAC's last 6 hex digits; when that is
 * taken too, the MAC name is used. Placeholder serials that boards ship with ("To Be Filled By
 * O.E.M.", "Not Specified", "0", …) are not serials.
 * @pure
 */

/** Serial numbers that vendors leave in unprogrammed boards (compared lower-case, blanks squeezed). */
const PLACEHOLDER_SERIALS = new Set([
  'to be filled by o.e.m.', 'not specified', 'not applicable', 'system serial number', 'default string', 'none', 'null',
  'unknown', 'n/a', 'na', 'serial', 'invalid', '0123456789', 'chassis serial number', 'not available', 'empty',
]);

const MAX_LABEL = 63;

/** The serial as a DNS-1123 label (lower case, `[a-z0-9-]`, no leading/trailing `-`), or undefined when it is no serial. */
export function serialLabel(serial: string | undefined): string | undefined {
  if (serial === undefined) return undefined;
  const squeezed = serial.trim().replace(/\s+/g, ' ').toLowerCase();
  if (squeezed === '' || PLACEHOLDER_SERIALS.has(squeezed)) return undefined;
  if (/^(.)\1*$/.test(squeezed.replace(/[^a-z0-9]/g, '') || '0')) return undefined; // "0000000", "-----", "xxxx"
  const label = squeezed.replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, MAX_LABEL).replace(/-+$/, '');
  return label === '' ? undefined : label;
}

/** `host-` and the 12 hex digits of `mac` (any of `aa:bb:…`, `AA-BB-…`). */
export function macHostName(mac: string): string {
  return `host-${mac.toLowerCase().replace(/[^0-9a-f]/g, '')}`;
}

/**
 * The name for a host discovered with boot MAC `mac` and system serial `serial`, avoiding the
 * names `taken` says are in use; undefined when even the MAC name is taken.
 */
export function discoveredHostName(serial: string | undefined, mac: string, taken: (name: string) => boolean): string | undefined {
  const hex = mac.toLowerCase().replace(/[^0-9a-f]/g, '');
  const label = serialLabel(serial);
  const candidates: string[] = [];
  if (label !== undefined) {
    candidates.push(label);
    const suffix = `-${hex.slice(-6)}`;
    candidates.push(`${label.slice(0, MAX_LABEL - suffix.length).replace(/-+$/, '')}${suffix}`);
  }
  candidates.push(macHostName(mac));
  return candidates.find((name) => !taken(name));
}
