/**
 * @module `rackside images build [--arch amd64|arm64] [--format initrd|iso] [--output DIR] [--config FILE]
 * [--cache-dir DIR] [--kernel VMLINUZ --modules DIR] [--kernel-args ARGS] [--agent-version V]
 * [--progress json]`: builds the preprovisioning ramdisk (kernel + initrd, or the ISO for
 * virtual media) on this machine — no agent needed. `--arch` picks the Debian architecture;
 * without it the head node's is built and, when the output goes where the agent serves it (no
 * `--output`) and the format is the initrd, every other one after it, best effort (a failure is
 * a warning). Another architecture is built from its own packages through a private apt,
 * images/arch-inputs.ts; its ISO (`--arch arm64 --format iso`) is UEFI only. By default the output goes
 * where the agent serves it (`<images.cacheDir>/ramdisk`, for another architecture than the head
 * node's `<images.cacheDir>/ramdisk/<arch>`) and, when the config is read (no --output or
 * --cache-dir, or --config), the kernel, modules and ISO kernel arguments come from it
 * (`images.ramdisk.kernel`, `.modules`, `.kernelParams`), as the agent's own
 * background build takes them (agent/provisioner/local/ramdisk-builds.ts, which runs this
 * command with `--progress json`: one JSON line per build step on stdout). Reproducible: the
 * same inputs give the same sha256 (`SOURCE_DATE_EPOCH` sets member times).
 */
import { join } from 'node:path';
import { DEFAULT_CONFIG_PATH, parseConfigYaml, type Config } from '../config.js';
import { buildRamdisk, debianArchOf, formatProgressLine, HEAD_NODE_ARCH, RAMDISK_ARCHES, ramdiskSubdir, type BuildProgress, type DebianArch, type KernelSource } from '../../images/index.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';
import { VERSION } from '../version.js';

/** Member mtime when SOURCE_DATE_EPOCH is not set: 2024-01-01T00:00:00Z. */
const DEFAULT_SOURCE_DATE_EPOCH = 1_704_067_200;


async function readConfig(ctx: CommandContext): Promise<Config['images'] | undefined> {
  const path = ctx.args.options.config ?? DEFAULT_CONFIG_PATH;
  let text: string;
  try {
    text = await ctx.io.readFile(path);
  } catch {
    if (ctx.args.options.config !== undefined) throw new CliError(ExitCode.usage, `cannot read --config ${path}`);
    return undefined;
  }
  return parseConfigYaml(text, path, { agentId: 'rackside' }).images;
}

/** The kernel: `--kernel`/`--modules`, else the config's `images.ramdisk.kernel`/`.modules`, else Debian's package. */
function kernelSource(ctx: CommandContext, images: Config['images'] | undefined): KernelSource {
  const { options } = ctx.args;
  if (options.kernel !== undefined && options.modules !== undefined) return { kind: 'tree', vmlinuzPath: options.kernel, modulesDir: options.modules };
  const configured = images?.ramdisk;
  if (configured?.kernel !== undefined) {
    if (configured.modules === undefined) throw new CliError(ExitCode.usage, 'images.ramdisk.kernel needs images.ramdisk.modules (its /lib/modules/<release> tree)');
    return { kind: 'tree', vmlinuzPath: configured.kernel, modulesDir: configured.modules };
  }
  return { kind: 'debian' };
}

/** The other architectures `images build` makes by default beside the head node's. */
const OTHER_ARCHS: readonly DebianArch[] = RAMDISK_ARCHES.filter((a) => a !== HEAD_NODE_ARCH);

/**
 * The architectures to build: `--arch` alone when given; otherwise the head node's, and — when
 * the output goes where the agent serves it (no `--output`) and the format is the initrd — every
 * other one too, so a mixed rack's ramdisks are ready before its first arm64 host boots.
 */
export function archsToBuild(options: { arch?: string; output?: string }, format: string): DebianArch[] {
  if (options.arch !== undefined) {
    const arch = debianArchOf(options.arch);
    if (arch === undefined) throw new CliError(ExitCode.usage, `--arch must be amd64 or arm64, got "${options.arch}"`);
    return [arch];
  }
  return options.output === undefined && format === 'initrd' ? [HEAD_NODE_ARCH, ...OTHER_ARCHS] : [HEAD_NODE_ARCH];
}

/** `rackside images build`. */
export async function imagesCommand(ctx: CommandContext): Promise<number> {
  const [, sub, extra] = ctx.args.positionals;
  const usage = 'usage: rackside images build [--arch amd64|arm64] [--format initrd|iso] [--output DIR] [--config FILE] [--cache-dir DIR] [--kernel VMLINUZ --modules DIR] [--kernel-args ARGS] [--agent-version V] [--progress json]';
  if (sub !== 'build' || extra !== undefined) throw new CliError(ExitCode.usage, usage);
  const { options } = ctx.args;
  const format = options.format ?? 'initrd';
  if (format !== 'initrd' && format !== 'iso') throw new CliError(ExitCode.usage, `--format must be initrd or iso, got "${format}"`);
  if ((options.kernel === undefined) !== (options.modules === undefined)) {
    throw new CliError(ExitCode.usage, '--kernel and --modules go together (a vmlinuz and its /lib/modules/<release> tree)');
  }
  const archs = archsToBuild(options, format);
  if (options.progress !== undefined && options.progress !== 'json') throw new CliError(ExitCode.usage, `--progress must be json, got "${options.progress}"`);
  // The config is read for what is not given: without --output or --cache-dir, or with --config
  // (the agent's own build passes every input and reads none: ramdisk-builds.ts).
  const images = options.config !== undefined || options.output === undefined || options['cache-dir'] === undefined ? await readConfig(ctx) : undefined;
  if (options.output === undefined && images === undefined) throw new CliError(ExitCode.usage, `no --output and no readable config to take images.cacheDir from: ${usage}`);
  const epoch = Number(ctx.io.env.SOURCE_DATE_EPOCH ?? DEFAULT_SOURCE_DATE_EPOCH);
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new CliError(ExitCode.usage, 'SOURCE_DATE_EPOCH must be a whole number of seconds');
  const [first, ...others] = archs;
  await buildOne(ctx, { arch: first ?? HEAD_NODE_ARCH, format, images, epoch, usage });
  // Another architecture by default is best effort: a head node that cannot fetch its packages
  // still has its own ramdisk, and the agent builds the other one when a host of it boots.
  for (const arch of others) {
    try {
      await buildOne(ctx, { arch, format, images, epoch, usage });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      ctx.io.stderr(`warning: the ${arch} ramdisk was not built (${why.split('\n')[0] ?? why}); the agent builds it when a host of that architecture boots, or run "rackside images build --arch ${arch}"\n`);
    }
  }
  return ExitCode.ok;
}

/** One architecture's build, to its served place under images.cacheDir unless --output says. */
async function buildOne(ctx: CommandContext, input: { arch: DebianArch; format: 'initrd' | 'iso'; images: Config['images'] | undefined; epoch: number; usage: string }): Promise<void> {
  const { options } = ctx.args;
  const { arch, format, images } = input;
  const outputDir = options.output ?? (images === undefined ? undefined : join(images.cacheDir, ramdiskSubdir(arch, HEAD_NODE_ARCH)));
  const cacheDir = options['cache-dir'] ?? (images === undefined ? undefined : join(images.cacheDir, 'build')) ?? (outputDir === undefined ? undefined : join(outputDir, '.build-cache'));
  if (outputDir === undefined || cacheDir === undefined) throw new CliError(ExitCode.usage, `no --output and no readable config to take images.cacheDir from: ${input.usage}`);
  // images.ramdisk.kernel is a kernel of the head node's architecture: another one takes Debian's unless --kernel names one.
  const kernel: KernelSource = arch === HEAD_NODE_ARCH || options.kernel !== undefined ? kernelSource(ctx, images) : { kind: 'debian' };
  const kernelArgs = options['kernel-args'] !== undefined ? options['kernel-args'].split(' ').filter((a) => a !== '') : images?.ramdisk.kernelParams;
  const json = options.progress === 'json';
  ctx.io.stderr(`building the ${arch} ${format} ramdisk into ${outputDir} (kernel: ${kernel.kind === 'debian' ? `Debian linux-image-${arch}` : kernel.vmlinuzPath}) …\n`);
  const result = await buildRamdisk({
    arch, outputDir, cacheDir, format, kernel, sourceDateEpoch: input.epoch, agentVersion: options['agent-version'] ?? VERSION,
    ...(format === 'iso' && kernelArgs !== undefined ? { isoKernelArgs: kernelArgs } : {}),
    ...(json ? { onProgress: (p: BuildProgress) => { ctx.io.stdout(`${formatProgressLine(p, format)}\n`); } } : {}),
  });
  if (json) return;
  const outputs = Object.entries(result.paths).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  for (const [name, path] of outputs) ctx.io.stdout(`${name.padEnd(9)}${path}\n`);
}
