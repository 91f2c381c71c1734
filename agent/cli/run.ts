/**
 * @module `rackside` dispatch: parses the command line, builds the API client from
 * `--server`/`RACKSIDE_SERVER` and `--token`/`RACKSIDE_TOKEN`, runs the command and turns
 * every failure into `error: <field>: <message>` on stderr plus an exit code (io.ts).
 */
import { parseCommandLine, type ParsedArgs } from './args.js';
import { ApiClient, DEFAULT_SERVER } from './client.js';
import {
  agentCommand, applyCommand, attachCommand, deleteCommand, detachCommand, inspectCommand, powerCommand,
  rebootCommand, versionCommand, type CommandContext,
} from './commands.js';
import { describeCommand, getCommand } from './get.js';
import { exportCommand } from './erase.js';
import { enrollCommand } from './enroll.js';
import { HELP_TEXT } from './help.js';
import { syncCommand } from './sync.js';
import { controllerCommand, fleetCommand } from './fleet.js';
import { sshCommand } from './ssh.js';
import { doctorCommand } from './doctor.js';
import { installCommand, migrateCommand, uninstallCommand } from './install.js';
import { CliError, ExitCode, type CliIo } from './io.js';

const COMMANDS: Record<string, (ctx: CommandContext) => Promise<number>> = {
  agent: agentCommand,
  apply: applyCommand,
  get: getCommand,
  describe: describeCommand,
  export: exportCommand,
  delete: deleteCommand,
  power: powerCommand,
  reboot: rebootCommand,
  inspect: inspectCommand,
  detach: detachCommand,
  attach: attachCommand,
  enroll: enrollCommand,
  version: versionCommand,
  sync: syncCommand,
  ssh: sshCommand,
  doctor: doctorCommand,
  install: installCommand,
  uninstall: uninstallCommand,
  migrate: migrateCommand,
  controller: controllerCommand,
  fleet: fleetCommand,
  // Loaded on use: only `rackside bmc` needs the drivers (undici, dgram).
  bmc: async (ctx) => (await import('./bmc.js')).bmcCommand(ctx),
  // Loaded on use: only `rackside images` needs the image builder.
  images: async (ctx) => (await import('./images.js')).imagesCommand(ctx),
};

/** `error: …` text for a failure; the field is named unless the message already starts with it. */
export function formatCliError(err: CliError): string {
  const prefix = err.field !== '' && !err.message.startsWith(err.field) ? `${err.field}: ` : '';
  return `error: ${prefix}${err.message}\n`;
}

function serverUrl(text: string): string {
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    throw new CliError(ExitCode.usage, `--server must be an http:// or https:// URL, got "${text}"`);
  }
  return text;
}

/**
 * `io` with a fetch that trusts `--cacert` and presents `--cert`/`--key` (or RACKSIDE_CACERT,
 * RACKSIDE_CERT, RACKSIDE_KEY) when any is given; the files are read, and undici loaded, at the
 * first request.
 */
function withTls(io: CliIo, args: ParsedArgs): CliIo {
  const files = {
    ca: args.options.cacert ?? io.env.RACKSIDE_CACERT,
    cert: args.options.cert ?? io.env.RACKSIDE_CERT,
    key: args.options.key ?? io.env.RACKSIDE_KEY,
  };
  if (files.ca === undefined && files.cert === undefined && files.key === undefined) return io;
  if ((files.cert === undefined) !== (files.key === undefined)) {
    throw new CliError(ExitCode.usage, '--cert and --key go together (the client certificate and its private key)');
  }
  const read = async (flag: string, path: string | undefined): Promise<string | undefined> => {
    if (path === undefined) return undefined;
    try {
      return await io.readFile(path);
    } catch (err) {
      throw new CliError(ExitCode.usage, `cannot read --${flag} ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  let ready: Promise<typeof globalThis.fetch> | undefined;
  const tlsFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    ready ??= (async () => {
      const [ca, cert, key] = await Promise.all([read('cacert', files.ca), read('cert', files.cert), read('key', files.key)]);
      const { createDispatchFetch } = await import('./dispatch-fetch.js');
      return createDispatchFetch({ ...(ca !== undefined ? { ca } : {}), ...(cert !== undefined ? { cert } : {}), ...(key !== undefined ? { key } : {}) });
    })();
    return (await ready)(input, init);
  };
  return { ...io, fetch: tlsFetch };
}

/** Runs `rackside` with `argv` (no node/script entries); resolves to the exit code. Never throws. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const args = parseCommandLine(argv);
    const command = args.positionals[0];
    if (command === undefined || command === 'help' || args.options.help === true) {
      (command === undefined && args.options.help !== true ? io.stderr : io.stdout)(HELP_TEXT);
      return command === undefined && args.options.help !== true ? ExitCode.usage : ExitCode.ok;
    }
    const run = COMMANDS[command];
    if (run === undefined) throw new CliError(ExitCode.usage, `unknown command "${command}" (see rackside --help)`);
    let client: ApiClient | undefined;
    const ctx: CommandContext = {
      io,
      args,
      client: () => {
        client ??= new ApiClient(serverUrl(args.options.server ?? io.env.RACKSIDE_SERVER ?? DEFAULT_SERVER), args.options.token ?? io.env.RACKSIDE_TOKEN, withTls(io, args));
        return client;
      },
    };
    return await run(ctx);
  } catch (err) {
    if (err instanceof CliError) {
      io.stderr(formatCliError(err));
      return err.exitCode;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return ExitCode.failure;
  }
}
