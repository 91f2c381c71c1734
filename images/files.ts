/**
 * @module Small file and process helpers of the image builder: sha256 of files, atomic writes,
 * PATH lookup and running a command with a clear error.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, constants, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Thrown when a command the builder runs fails; the message names the command and its stderr. */
export class CommandError extends Error {
  readonly exitCode: number | null;
  constructor(message: string, exitCode: number | null) {
    super(message);
    this.name = 'CommandError';
    this.exitCode = exitCode;
  }
}

/** Options of {@link runCommand}. */
export interface RunOptions {
  cwd?: string;
  /** Bytes written to the command's stdin. */
  input?: Uint8Array;
  maxBufferBytes?: number;
  /** Extra environment variables, merged over the current environment. */
  env?: Record<string, string>;
}

/**
 * Runs `cmd args` without a shell and resolves with stdout as a Buffer; rejects with a
 * {@link CommandError} naming the command, exit code and stderr when it fails or cannot start.
 */
export function runCommand(cmd: string, args: readonly string[], options: RunOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      {
        cwd: options.cwd,
        encoding: 'buffer',
        env: options.env === undefined ? undefined : { ...process.env, ...options.env },
        maxBuffer: options.maxBufferBytes ?? 512 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (err === null) {
          resolve(stdout);
          return;
        }
        const code = typeof err.code === 'number' ? err.code : null;
        const detail = stderr.toString('utf8').trim() || err.message;
        reject(new CommandError(`${cmd} ${args.join(' ')} failed (exit ${code ?? err.code ?? 'signal'}): ${detail}`, code));
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** Resolves with the lowercase hex sha256 of the file at `path`, streaming it. */
export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => {
        resolve(hash.digest('hex'));
      });
  });
}

/** Returns the lowercase hex sha256 of `data`. */
export function sha256Of(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Writes `data` to `path` through a temporary file and a rename, so readers never see a partial file. */
export async function writeFileAtomic(path: string, data: Uint8Array | string, mode = 0o644): Promise<void> {
  const tmp = join(dirname(path), `.${path.slice(path.lastIndexOf('/') + 1)}.${process.pid}.tmp`);
  try {
    await writeFile(tmp, data, { mode });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Resolves true when `path` exists (any type). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/** Directories searched for host tools, in order (sbin first: most tools here are admin tools). */
export const toolSearchPath = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'] as const;

/** Resolves with the first executable named `name` in `searchPath`, or undefined. */
export async function findExecutable(name: string, searchPath: readonly string[] = toolSearchPath): Promise<string | undefined> {
  if (name.includes('/')) return undefined;
  for (const dir of searchPath) {
    try {
      await access(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
