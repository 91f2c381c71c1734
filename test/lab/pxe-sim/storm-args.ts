/**
 * @module The simulator's command-line flags, both ways: {@link parseStormArgs} for cli.ts and
 * {@link formatStormArgs} for whoever starts cli.ts in a namespace (spawn-storm.ts), from one
 * table so the two cannot drift. Flags: `--clients N` (default 1), `--first-index I`,
 * `--mac-prefix 02:00:00`, `--mac-order scattered|sequential`, `--arch efi|bios|mixed`, `--blksize 1468`, `--windowsize 4`,
 * `--ramp-ms 0`, `--last-phase dhcp1|tftp|dhcp2|script|kernel|initrd`, `--expect-first-stage B`,
 * `--expect-kernel B`, `--expect-initrd B`, `--dhcp-waits-ms 4000,8000,16000,32000`,
 * `--ipxe-dhcp-waits-ms 1000,2000,4000,8000`,
 * `--tftp-timeout-ms`, `--tftp-retries`, `--http-idle-ms`, `--client-ms`; and for the CLI itself
 * `--json`, `--out FILE` (write the result JSON there) and `--progress`.
 * @pure
 */
import { parseArgs } from 'node:util';
import { PHASES, type FirmwareTimeouts, type PhaseName, type StormOptions } from './types.js';

/** What the CLI does besides the storm. */
export interface CliOutput {
  /** Print the StormResult as one JSON line on stdout (else the summary text). */
  json: boolean;
  /** Write the StormResult JSON to this file (for results larger than a pipe should carry). */
  out?: string;
  /** One stderr line per finished client. */
  progress: boolean;
}

type IntegerKey = 'clients' | 'firstIndex' | 'blksize' | 'windowsize' | 'rampMs';
type TimeoutKey = 'tftpTimeoutMs' | 'tftpRetries' | 'httpIdleMs' | 'clientMs';
type SizeKey = 'firstStage' | 'kernel' | 'initrd';

const INTEGER_FLAGS: readonly [string, IntegerKey][] = [['clients', 'clients'], ['first-index', 'firstIndex'], ['blksize', 'blksize'], ['windowsize', 'windowsize'], ['ramp-ms', 'rampMs']];
const TIMEOUT_FLAGS: readonly [string, TimeoutKey][] = [['tftp-timeout-ms', 'tftpTimeoutMs'], ['tftp-retries', 'tftpRetries'], ['http-idle-ms', 'httpIdleMs'], ['client-ms', 'clientMs']];
const SIZE_FLAGS: readonly [string, SizeKey][] = [['expect-first-stage', 'firstStage'], ['expect-kernel', 'kernel'], ['expect-initrd', 'initrd']];
const STRING_FLAGS = ['mac-prefix', 'mac-order', 'arch', 'last-phase', 'dhcp-waits-ms', 'ipxe-dhcp-waits-ms', 'out'] as const;

function integer(flag: string, text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new RangeError(`--${flag} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Parses the flags (see the module comment); throws a RangeError naming a bad flag. */
export function parseStormArgs(args: readonly string[]): { options: StormOptions; output: CliOutput } {
  const spec: Record<string, { type: 'string' } | { type: 'boolean' }> = { json: { type: 'boolean' }, progress: { type: 'boolean' } };
  for (const [flag] of [...INTEGER_FLAGS, ...TIMEOUT_FLAGS, ...SIZE_FLAGS]) spec[flag] = { type: 'string' };
  for (const flag of STRING_FLAGS) spec[flag] = { type: 'string' };
  const { values } = parseArgs({ args: [...args], strict: true, allowPositionals: false, options: spec });
  const text = (flag: string): string | undefined => {
    const v = values[flag];
    return typeof v === 'string' ? v : undefined;
  };
  const options: StormOptions = { clients: 1 };
  for (const [flag, key] of INTEGER_FLAGS) {
    const v = text(flag);
    if (v !== undefined) options[key] = integer(flag, v);
  }
  const timeouts: Partial<FirmwareTimeouts> = {};
  for (const [flag, key] of TIMEOUT_FLAGS) {
    const v = text(flag);
    if (v !== undefined) timeouts[key] = integer(flag, v);
  }
  const waits = text('dhcp-waits-ms');
  if (waits !== undefined) timeouts.dhcpWaitsMs = waits.split(',').map((w) => integer('dhcp-waits-ms', w));
  const ipxeWaits = text('ipxe-dhcp-waits-ms');
  if (ipxeWaits !== undefined) timeouts.ipxeDhcpWaitsMs = ipxeWaits.split(',').map((w) => integer('ipxe-dhcp-waits-ms', w));
  if (Object.keys(timeouts).length > 0) options.timeouts = timeouts;
  const expected: NonNullable<StormOptions['expected']> = {};
  for (const [flag, key] of SIZE_FLAGS) {
    const v = text(flag);
    if (v !== undefined) expected[key] = integer(flag, v);
  }
  if (Object.keys(expected).length > 0) options.expected = expected;
  const prefix = text('mac-prefix');
  if (prefix !== undefined) options.macPrefix = prefix;
  const order = text('mac-order');
  if (order !== undefined) {
    if (order !== 'sequential' && order !== 'scattered') throw new RangeError(`--mac-order must be sequential or scattered, got ${JSON.stringify(order)}`);
    options.macOrder = order;
  }
  const arch = text('arch');
  if (arch !== undefined) {
    if (arch !== 'efi' && arch !== 'bios' && arch !== 'mixed') throw new RangeError(`--arch must be efi, bios or mixed, got ${JSON.stringify(arch)}`);
    options.arch = arch;
  }
  const lastPhase = text('last-phase');
  if (lastPhase !== undefined) {
    const phase = PHASES.find((p) => p === lastPhase);
    if (phase === undefined) throw new RangeError(`--last-phase must be one of ${PHASES.join(', ')}, got ${JSON.stringify(lastPhase)}`);
    options.lastPhase = phase;
  }
  const out = text('out');
  return { options, output: { json: values.json === true, progress: values.progress === true, ...(out === undefined ? {} : { out }) } };
}

/** The flags that make cli.ts run `options` (callbacks are not carried). */
export function formatStormArgs(options: StormOptions, output: Partial<CliOutput> = {}): string[] {
  const args: string[] = [];
  for (const [flag, key] of INTEGER_FLAGS) {
    const v = options[key];
    if (v !== undefined) args.push(`--${flag}`, String(v));
  }
  for (const [flag, key] of TIMEOUT_FLAGS) {
    const v = options.timeouts?.[key];
    if (v !== undefined) args.push(`--${flag}`, String(v));
  }
  if (options.timeouts?.dhcpWaitsMs !== undefined) args.push('--dhcp-waits-ms', options.timeouts.dhcpWaitsMs.join(','));
  if (options.timeouts?.ipxeDhcpWaitsMs !== undefined) args.push('--ipxe-dhcp-waits-ms', options.timeouts.ipxeDhcpWaitsMs.join(','));
  for (const [flag, key] of SIZE_FLAGS) {
    const v = options.expected?.[key];
    if (v !== undefined) args.push(`--${flag}`, String(v));
  }
  if (options.macPrefix !== undefined) args.push('--mac-prefix', options.macPrefix);
  if (options.macOrder !== undefined) args.push('--mac-order', options.macOrder);
  if (options.arch !== undefined) args.push('--arch', options.arch);
  if (options.lastPhase !== undefined) args.push('--last-phase', options.lastPhase satisfies PhaseName);
  if (output.out !== undefined) args.push('--out', output.out);
  if (output.json === true) args.push('--json');
  if (output.progress === true) args.push('--progress');
  return args;
}
