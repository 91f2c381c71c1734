/**
 * @module `rackside enroll NAME [--bmc ADDRESS --username USER --password-file FILE]`
 * (docs/discovery.md, docs/cli.md): gives a host without a BMC its BMC through
 * `POST /api/v1/hosts/NAME/enroll` — the one discovery proposed, or the one given. The password
 * comes from `--password-file` (`-` reads stdin) or RACKSIDE_BMC_PASSWORD, never from the
 * command line.
 */
import { hostPath, nameArg, type CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';

/** Usage line of `rackside enroll`. */
export const ENROLL_USAGE = 'enroll NAME [--bmc ADDRESS --username USER --password-file FILE]';

async function password(ctx: CommandContext): Promise<string> {
  const file = ctx.args.options['password-file'];
  if (file === undefined) {
    const env = ctx.io.env.RACKSIDE_BMC_PASSWORD;
    if (env === undefined || env === '') throw new CliError(ExitCode.usage, '--bmc needs --password-file FILE (- reads stdin) or RACKSIDE_BMC_PASSWORD');
    return env;
  }
  try {
    const text = file === '-' ? await ctx.io.readStdin() : await ctx.io.readFile(file);
    return text.replace(/\r?\n$/, '');
  } catch (err) {
    throw new CliError(ExitCode.usage, `cannot read --password-file ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `rackside enroll NAME …`. */
export async function enrollCommand(ctx: CommandContext): Promise<number> {
  const name = nameArg(ctx, 1, ENROLL_USAGE);
  const { options } = ctx.args;
  if (options.password !== undefined) throw new CliError(ExitCode.usage, '--password is refused: use --password-file FILE (- reads stdin) or RACKSIDE_BMC_PASSWORD');
  let body: Record<string, string> = {};
  if (options.bmc !== undefined) {
    const username = options.username ?? ctx.io.env.RACKSIDE_BMC_USERNAME;
    if (username === undefined || username === '') throw new CliError(ExitCode.usage, `--bmc needs --username USER: usage: rackside ${ENROLL_USAGE}`);
    body = { bmcAddress: options.bmc, username, password: await password(ctx) };
  } else if (options.username !== undefined || options['password-file'] !== undefined) {
    throw new CliError(ExitCode.usage, `--username and --password-file go with --bmc ADDRESS: usage: rackside ${ENROLL_USAGE}`);
  }
  const host = (await ctx.client().request('POST', `${hostPath(name)}/enroll`, { json: body })) as { spec?: { bmc?: { address?: string } } };
  ctx.io.stdout(`baremetalhost/${name} enrolled with BMC ${host.spec?.bmc?.address ?? ''}: registering\n`);
  return ExitCode.ok;
}
