/**
 * @module Building a host's config drive image: ISO 9660 with Rock Ridge and Joliet, volume id
 * `config-2` (what Ironic builds and cloud-init looks for by label), via `xorriso -as mkisofs`;
 * or a VFAT image labelled `CONFIG-2` (cloud-init looks for both spellings) via `mkfs.vfat` + mtools (cloud-init accepts both). The
 * ramdisk writes the image into a partition at the end of the disk. Reproducible: file times are
 * `sourceDateEpoch` and xorriso/mtools read `SOURCE_DATE_EPOCH`.
 */
import { mkdir, mkdtemp, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { renderConfigDriveFiles, type ConfigDriveContent } from './config-drive-files.js';
import { runCommand, sha256File } from './files.js';

/** Options of {@link buildConfigDrive}. */
export interface BuildConfigDriveOptions {
  outputPath: string;
  /** Default 'iso'. */
  format?: 'iso' | 'vfat';
  /** mtime of every file (seconds); default 0. */
  sourceDateEpoch?: number;
}

/** Thrown when a tool is missing or fails. */
export class ConfigDriveBuildError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigDriveBuildError';
  }
}

async function tool(cmd: string, pkg: string, args: readonly string[], env: Record<string, string>): Promise<void> {
  await runCommand(cmd, args, { env }).catch((err: unknown) => {
    const missing = err instanceof Error && /ENOENT/.test(err.message);
    throw new ConfigDriveBuildError(missing ? `${cmd} not found: apt-get install ${pkg}` : `${cmd} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  });
}

async function setTimes(dir: string, seconds: number): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory()) await setTimes(join(dir, e.name), seconds);
    await utimes(join(dir, e.name), seconds, seconds);
  }
  await utimes(dir, seconds, seconds);
}

/**
 * Writes the config drive for `content` to `outputPath` (through a temporary file and a rename)
 * and resolves with its sha256 and size. Throws ConfigDriveError for bad content and
 * {@link ConfigDriveBuildError} naming the package of a missing tool.
 */
export async function buildConfigDrive(content: ConfigDriveContent, options: BuildConfigDriveOptions): Promise<{ sha256: string; sizeBytes: number }> {
  const files = renderConfigDriveFiles(content);
  const epoch = options.sourceDateEpoch ?? 0;
  const env = { SOURCE_DATE_EPOCH: String(epoch), MTOOLS_SKIP_CHECK: '1', TZ: 'UTC' };
  await mkdir(dirname(options.outputPath), { recursive: true });
  const work = await mkdtemp(join(dirname(options.outputPath), '.config-drive-'));
  try {
    const stage = join(work, 'stage');
    for (const f of files) {
      await mkdir(dirname(join(stage, f.path)), { recursive: true });
      await writeFile(join(stage, f.path), f.data);
    }
    await setTimes(stage, epoch);
    const out = join(work, 'out.img');
    if ((options.format ?? 'iso') === 'iso') {
      await tool('xorriso', 'xorriso', ['-as', 'mkisofs', '-quiet', '-o', out, '-V', 'config-2', '-r', '-J', '-joliet-long', stage], env);
    } else {
      const bytes = files.reduce((s, f) => s + f.data.length, 0);
      const kib = Math.max(1024, Math.ceil((bytes * 1.2 + 256 * 1024) / 1024 / 64) * 64);
      await tool('mkfs.vfat', 'dosfstools', ['-C', '--invariant', '-i', '434f4e46', '-n', 'CONFIG-2', out, String(kib)], env);
      await tool('mmd', 'mtools', ['-i', out, '::/openstack', '::/openstack/latest'], env);
      for (const f of files) await tool('mcopy', 'mtools', ['-i', out, join(stage, f.path), `::/${f.path}`], env);
    }
    await rename(out, options.outputPath);
    return { sha256: await sha256File(options.outputPath), sizeBytes: (await stat(options.outputPath)).size };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
