/**
 * @module `rackside bmc probe ADDRESS [--username U --password-file F] [--insecure] [-o json|yaml]`:
 * runs the capability probe (drivers/probe.ts) from this machine, without the agent, and prints
 * the vendor, model, firmware, what works, what each attempt answered and the recommended metal3
 * address. Credentials are optional (the ServiceRoot and IPMI capabilities need none; the
 * System, VirtualMedia and BIOS reads do). Exit 0 when something answered, 6 when nothing did.
 */
import { BmcAddressError, probeBmc, type ProbeReport } from '../../drivers/index.js';
import { BmcExitCode, renderStructured } from './bmc-output.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';

/** Usage of the probe verb. */
export const PROBE_USAGE = 'usage: rackside bmc probe ADDRESS [--username USER --password-file FILE] [--insecure] [-o json|yaml]';

/** The report as text: facts, features, attempts, then the recommendation. */
export function renderProbeReport(report: ProbeReport): string {
  const lines: string[] = [];
  lines.push(`address:     ${report.address} (metal3 reads it as ${report.givenType})`);
  if (report.vendor !== undefined) lines.push(`vendor:      ${report.vendor}`);
  if (report.model !== undefined) lines.push(`model:       ${report.model}`);
  if (report.firmware !== undefined) lines.push(`firmware:    ${report.firmware}`);
  lines.push('', 'features:');
  for (const f of report.features) {
    const mark = f.supported === true ? 'yes' : f.supported === false ? 'no ' : '?  ';
    lines.push(`  ${mark} ${f.name}${f.detail === '' ? '' : `  ${f.detail}`}`);
  }
  lines.push('', 'attempts:');
  for (const a of report.attempts) lines.push(`  ${a.ok ? 'ok  ' : 'fail'} ${a.request} -> ${a.answer} (${a.elapsedMs} ms)`);
  lines.push('');
  lines.push(report.recommendedAddress === undefined ? 'recommended: none — nothing answered' : `recommended: ${report.recommendedAddress}`);
  for (const n of report.notes) lines.push(`  note: ${n}`);
  lines.push(`(probe took ${report.elapsedMs} ms)`);
  return `${lines.join('\n')}\n`;
}

async function optionalCredentials(ctx: CommandContext): Promise<{ username?: string; password?: string }> {
  const username = ctx.args.options.username ?? ctx.io.env.RACKSIDE_BMC_USERNAME;
  if (username === undefined || username === '') return {};
  const file = ctx.args.options['password-file'];
  if (file === undefined) return { username, password: ctx.io.env.RACKSIDE_BMC_PASSWORD ?? '' };
  try {
    const text = file === '-' ? await ctx.io.readStdin() : await ctx.io.readFile(file);
    return { username, password: text.replace(/\r?\n$/, '') };
  } catch (err) {
    throw new CliError(ExitCode.usage, `cannot read --password-file ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `rackside bmc probe ADDRESS …`. */
export async function probeCommand(ctx: CommandContext): Promise<number> {
  if (ctx.args.options.password !== undefined) throw new CliError(ExitCode.usage, '--password is refused: use --password-file FILE (- reads stdin) or RACKSIDE_BMC_PASSWORD');
  const address = ctx.args.positionals[2];
  if (address === undefined || ctx.args.positionals.length > 3) throw new CliError(ExitCode.usage, PROBE_USAGE);
  for (const scoped of ['uefi', 'legacy', 'persistent', 'wait', 'timeout'] as const) {
    if (ctx.args.options[scoped] !== undefined) throw new CliError(ExitCode.usage, `option --${scoped} does not apply to "bmc probe"`);
  }
  const { output } = ctx.args.options;
  if (output !== undefined && output !== 'json' && output !== 'yaml') throw new CliError(ExitCode.usage, `-o must be json or yaml, got "${output}"`);
  const credentials = await optionalCredentials(ctx);
  let report: ProbeReport;
  try {
    report = await probeBmc({ address, ...credentials, insecure: ctx.args.options.insecure === true });
  } catch (err) {
    if (err instanceof BmcAddressError) throw new CliError(ExitCode.usage, err.message);
    throw err;
  }
  ctx.io.stdout(output === undefined ? renderProbeReport(report) : renderStructured(output, report));
  return report.answered ? ExitCode.ok : BmcExitCode.unreachable;
}
