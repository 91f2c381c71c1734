/**
 * @module Text layout for the CLI, like kubectl's: column tables (upper-case headers, columns
 * padded to their widest cell plus three spaces, the last column unpadded), `Key: value`
 * blocks for describe, and kubectl's human durations (`45s`, `3m20s`, `5h`, `12d`).
 * @pure
 */

/** Renders rows under headers, each line ending in `\n`. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[], indent = ''): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    indent + cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3))).join('').trimEnd() + '\n';
  return line(headers) + rows.map(line).join('');
}

/** Renders one row padded to the widths of an earlier table (for streamed rows under a header). */
export function renderRow(widths: readonly number[], cells: readonly string[]): string {
  return cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3))).join('').trimEnd() + '\n';
}

/** Column widths of a table with these headers and rows. */
export function columnWidths(headers: readonly string[], rows: readonly (readonly string[])[]): number[] {
  return headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
}

/** `Key:   value` lines aligned on the values; an empty value prints the key alone. */
export function renderFields(fields: readonly (readonly [string, string])[], indent = ''): string {
  const width = Math.max(0, ...fields.map(([k]) => k.length + 1));
  return fields
    .map(([k, v]) => (v === '' ? `${indent}${k}:\n` : `${indent}${`${k}:`.padEnd(width + 2)}${v}\n`))
    .join('');
}

/**
 * kubectl's `HumanDuration` (k8s.io/apimachinery/pkg/util/duration): two units where it
 * helps (`3m20s` under 10 minutes, `5h30m` under 8 hours, `3d4h` under 8 days, `2y10d`
 * under 8 years), one unit otherwise.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

/** Age of an RFC 3339 timestamp at `nowMs`, as {@link humanDuration}; `<unknown>` when unset or invalid. */
export function formatAge(timestamp: string | undefined, nowMs: number): string {
  const then = timestamp === undefined || timestamp === '' ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(then) ? '<unknown>' : humanDuration(nowMs - then);
}

/** Decimal byte size as disks are labelled (`480 GB`, `1.9 TB`). */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '';
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  const shown = value >= 100 || unit === 0 ? Math.round(value).toString() : value.toFixed(1).replace(/\.0$/, '');
  return `${shown} ${units[unit] ?? 'B'}`;
}
