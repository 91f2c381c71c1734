/**
 * @module `rackside doctor [--config FILE] [-o json] [--timeout 3s]`: checks this head node
 * locally (not through the API) — config, provisioning interface, boot ports, other DHCP
 * servers, boot assets, state dir, clock, controller, BMCs — and prints a CHECK | RESULT |
 * DETAIL | FIX table. Exit 0 when nothing failed (warnings do not fail), 1 otherwise.
 */
import { DEFAULT_CONFIG_PATH } from '../config.js';
import { createSystemProbes, doctorExitCode, renderDoctorJson, renderDoctorTable, runDoctor } from '../doctor/index.js';
import { parseDuration } from './args.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';

/** Default DHCP listen window. */
export const DEFAULT_DHCP_LISTEN = '3s';

/** `rackside doctor`. */
export async function doctorCommand(ctx: CommandContext): Promise<number> {
  const { config, output, timeout = DEFAULT_DHCP_LISTEN, server } = ctx.args.options;
  if (ctx.args.positionals.length > 1) throw new CliError(ExitCode.usage, 'usage: rackside doctor [--config FILE] [-o json] [--timeout 3s]');
  if (output !== undefined && output !== 'json' && output !== 'table') throw new CliError(ExitCode.usage, `-o must be json or table, got "${output}"`);
  const listenMs = parseDuration(timeout);
  if (listenMs === undefined || listenMs <= 0 || listenMs > 60_000) {
    throw new CliError(ExitCode.usage, `--timeout (how long to listen for DHCP offers) must be a duration up to 60s, got "${timeout}"`);
  }
  const probeServer = server ?? ctx.io.env.RACKSIDE_SERVER;
  const probes = createSystemProbes(probeServer === undefined ? {} : { server: probeServer });
  const results = await runDoctor({ configPath: config ?? DEFAULT_CONFIG_PATH, dhcpListenMs: listenMs }, probes);
  ctx.io.stdout(output === 'json' ? renderDoctorJson(results) : renderDoctorTable(results));
  return doctorExitCode(results);
}
