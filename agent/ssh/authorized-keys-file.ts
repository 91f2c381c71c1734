/**
 * @module The authorized_keys file as the SSH server sees it: checked (one `stat`) on every
 * authentication attempt and re-read and re-parsed when its inode, size or mtime changed, so an
 * edited file takes effect at the next login without a restart. Each key is also parsed by
 * ssh2 (`utils.parseKey`) once per load, for signature checks; lines ssh2 cannot parse are
 * reported like malformed lines. Problems are reported once per change of the file.
 */
import { readFile, stat } from 'node:fs/promises';
import ssh2 from 'ssh2';
import type { ParsedKey } from 'ssh2';
import { parseAuthorizedKeys, type AuthorizedKey, type AuthorizedKeysProblem } from './authorized-keys.js';

/** A usable key: the parsed line and ssh2's key object for `verify`. */
export interface LoadedKey {
  entry: AuthorizedKey;
  publicKey: ParsedKey;
}

/** Receives the problems found when the file (re)loads; `problems` is empty when all is well. */
export type AuthorizedKeysReport = (report: { path: string; keys: number; problems: AuthorizedKeysProblem[]; error?: string }) => void;

interface Snapshot {
  signature: string;
  keys: LoadedKey[];
}

/** A cached view of one authorized_keys file. */
export class AuthorizedKeysFile {
  readonly path: string;
  private readonly report: AuthorizedKeysReport;
  private snapshot: Snapshot | undefined;

  constructor(path: string, report: AuthorizedKeysReport) {
    this.path = path;
    this.report = report;
  }

  /**
   * Returns the current keys, re-reading the file when it changed. A missing or unreadable file
   * yields no keys (nobody can log in) and one report saying why.
   */
  async keys(): Promise<readonly LoadedKey[]> {
    let signature: string;
    try {
      const info = await stat(this.path);
      signature = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
    } catch (err) {
      return this.fail(`missing:${errorCode(err)}`, err);
    }
    if (this.snapshot?.signature === signature) return this.snapshot.keys;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      return this.fail(`unreadable:${errorCode(err)}`, err);
    }
    const parsed = parseAuthorizedKeys(text);
    const problems = [...parsed.problems];
    const keys: LoadedKey[] = [];
    for (const entry of parsed.keys) {
      const publicKey = ssh2.utils.parseKey(entry.keyBlob);
      if (publicKey instanceof Error) problems.push({ line: entry.line, message: `key data is not a valid ${entry.keyType} key: ${publicKey.message}` });
      else keys.push({ entry, publicKey });
    }
    problems.sort((a, b) => a.line - b.line);
    this.snapshot = { signature, keys };
    this.report({ path: this.path, keys: keys.length, problems });
    return keys;
  }

  private fail(signature: string, err: unknown): LoadedKey[] {
    if (this.snapshot?.signature !== signature) {
      this.snapshot = { signature, keys: [] };
      const message = err instanceof Error ? err.message : String(err);
      this.report({ path: this.path, keys: 0, problems: [], error: `cannot read ${this.path}: ${message}; nobody can log in over SSH` });
    }
    return [];
  }
}

function errorCode(err: unknown): string {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : 'error';
}
