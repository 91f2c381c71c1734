/**
 * @module `rackside images build [--format initrd|iso] [--output DIR] [--config FILE]
 * [--cache-dir DIR] [--kernel VMLINUZ --modules DIR]`: builds the preprovisioning ramdisk
 * (kernel + initrd, or the ISO for virtual media) on this machine — no agent needed. By default
 * the output goes where the agent serves it: `<images.cacheDir>/ramdisk` from the config.
 * Reproducible: the same inputs give the same sha256 (`SOURCE_DATE_EPOCH` sets member times).
 */
import { join } from 'node:path';
import { DEFAULT_CONFIG_PATH, parseConfigYaml } from '../config.js';
import { buildRamdisk, type KernelSource } from '../../images/index.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';

/** Member mtime when SOURCE_DATE_EPOCH is not set: 2024-01-01T00:00:00Z. */
const DEFAULT_SOURCE_DATE_EPOCH = 1_704_067_200;

async function defaultDirs(ctx: CommandContext): Promise<{ output: string; cache: string } | undefined> {
  const path = ctx.args.options.config ?? DEFAULT_CONFIG_PATH;
  let text: string;
  try {
    text = await ctx.io.readFile(path);
  } catch {
    if (ctx.args.options.config !== undefined) throw new CliError(ExitCode.usage, `cannot read --config ${path}`);
    return undefined;
  }
  const config = parseConfigYaml(text, path, { agentId: 'rackside' });
  return { output: join(config.images.cacheDir, 'ramdisk'), cache: join(config.images.cacheDir, 'build') };
}

/** `rackside images build`. */
export async function imagesCommand(ctx: CommandContext): Promise<number> {
  const [, sub, extra] = ctx.args.positionals;
  const usage = 'usage: rackside images build [--format initrd|iso] [--output DIR] [--config FILE] [--cache-dir DIR] [--kernel VMLINUZ --modules DIR]';
  if (sub !== 'build' || extra !== undefined) throw new CliError(ExitCode.usage, usage);
  const { options } = ctx.args;
  const format = options.format ?? 'initrd';
  if (format !== 'initrd' && format !== 'iso') throw new CliError(ExitCode.usage, `--format must be initrd or iso, got "${format}"`);
  if ((options.kernel === undefined) !== (options.modules === undefined)) {
    throw new CliError(ExitCode.usage, '--kernel and --modules go together (a vmlinuz and its /lib/modules/<release> tree)');
  }
  const defaults = options.output === undefined || options['cache-dir'] === undefined ? await defaultDirs(ctx) : undefined;
  const outputDir = options.output ?? defaults?.output;
  const cacheDir = options['cache-dir'] ?? defaults?.cache ?? (outputDir === undefined ? undefined : join(outputDir, '.build-cache'));
  if (outputDir === undefined || cacheDir === undefined) throw new CliError(ExitCode.usage, `no --output and no readable config to take images.cacheDir from: ${usage}`);
  const epoch = Number(ctx.io.env.SOURCE_DATE_EPOCH ?? DEFAULT_SOURCE_DATE_EPOCH);
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new CliError(ExitCode.usage, 'SOURCE_DATE_EPOCH must be a whole number of seconds');
  const kernel: KernelSource =
    options.kernel !== undefined && options.modules !== undefined
      ? { kind: 'tree', vmlinuzPath: options.kernel, modulesDir: options.modules }
      : { kind: 'debian' };
  ctx.io.stderr(`building the ${format} ramdisk into ${outputDir} (kernel: ${kernel.kind === 'debian' ? 'Debian linux-image-amd64' : kernel.vmlinuzPath}) …\n`);
  const result = await buildRamdisk({ outputDir, cacheDir, format, kernel, sourceDateEpoch: epoch });
  const outputs = Object.entries(result.paths).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  for (const [name, path] of outputs) ctx.io.stdout(`${name.padEnd(9)}${path}\n`);
  return ExitCode.ok;
}
