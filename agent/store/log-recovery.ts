/**
 * @module Making LevelDB's log recovery loud. When LevelDB opens a database whose write-ahead
 * log (`NNNNNN.log`) has a damaged record (checksum mismatch, bad record length), it drops the
 * damaged bytes, writes "(ignoring error) …: dropping N bytes; Corruption: …" into its info log
 * (`LOG`), compacts what it could read and deletes the old log — the loss would be silent and
 * its evidence gone. So before opening, every `*.log` is hard-linked (no copy) into
 * `<stateDir>/db-recovery/pending`; after opening, the fresh `LOG` is read: if LevelDB dropped
 * anything, the links are kept as `<stateDir>/db-recovery/damaged-<time>` and the damage is
 * reported (`StoreDamage`, `Store.damage`); otherwise the links are removed. A torn *tail* (a write the
 * crash interrupted before its fsync returned) is not reported: LevelDB treats it as the end
 * of the log, and no such write was ever acknowledged.
 */
import { link, mkdir, readdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoreDamage } from './types.js';

/**
 * LevelDB info-log lines that report dropped data: "dropping N bytes" and "Corruption" (see
 * leveldb db_impl.cc LogReporter::Corruption, which logs "(ignoring error) …" when paranoid
 * checks are off — classic-level's default).
 */
export function parseRecoveryProblems(infoLog: string): { droppedBytes: number; problems: string[] } {
  const problems: string[] = [];
  let droppedBytes = 0;
  for (const raw of infoLog.split('\n')) {
    if (!/dropping \d+ bytes|Corruption/.test(raw)) continue;
    // "2026/11/30-19:58:44.162844 7fa2517766c0 (ignoring error) …" → "(ignoring error) …"
    problems.push(raw.replace(/^\S+ \S+ /, '').trim());
    const dropped = /dropping (\d+) bytes/.exec(raw)?.[1];
    if (dropped !== undefined) droppedBytes += Number(dropped);
  }
  return { droppedBytes, problems };
}

/** Hard-links the write-ahead logs aside before LevelDB opens; returns the directory, or undefined when nothing could be kept. */
export async function preserveLogs(stateDir: string, dbDir: string): Promise<string | undefined> {
  let names: string[];
  try {
    names = (await readdir(dbDir)).filter((n) => n.endsWith('.log'));
  } catch {
    return undefined; // a new database
  }
  if (names.length === 0) return undefined;
  const pending = join(stateDir, 'db-recovery', 'pending');
  await rm(pending, { recursive: true, force: true });
  await mkdir(pending, { recursive: true, mode: 0o700 });
  let kept = 0;
  for (const name of names) {
    try {
      await link(join(dbDir, name), join(pending, name));
      kept++;
    } catch {
      // a filesystem without hard links: the damage is still reported, just not kept
    }
  }
  return kept > 0 ? pending : undefined;
}

/**
 * After LevelDB opened: reads its fresh info log; keeps the preserved logs when anything was
 * dropped (returning the damage) and removes them otherwise.
 */
export async function concludeRecovery(stateDir: string, dbDir: string, pending: string | undefined, now: () => Date): Promise<StoreDamage | undefined> {
  let infoLog = '';
  try {
    infoLog = await readFile(join(dbDir, 'LOG'), 'utf8');
  } catch {
    // no info log (a build of LevelDB without one): nothing to learn
  }
  const { droppedBytes, problems } = parseRecoveryProblems(infoLog);
  if (problems.length === 0) {
    if (pending !== undefined) {
      await rm(pending, { recursive: true, force: true });
      await rmdir(join(stateDir, 'db-recovery')).catch(() => undefined); // kept when it holds damaged logs
    }
    return undefined;
  }
  let preservedAt: string | undefined;
  if (pending !== undefined) {
    preservedAt = join(stateDir, 'db-recovery', `damaged-${now().toISOString().replace(/[:.]/g, '-')}`);
    await rename(pending, preservedAt);
  }
  return { droppedBytes, problems, preservedAt };
}

/** The operator-facing sentence for `damage`. */
export function describeDamage(damage: StoreDamage): string {
  const kept = damage.preservedAt === undefined ? 'the damaged log could not be kept' : `the damaged log is kept in ${damage.preservedAt}`;
  return `the state database's write-ahead log was damaged: LevelDB dropped ${damage.droppedBytes} bytes of records on open ` +
    `(${damage.problems[0] ?? 'corruption'}); writes made shortly before the damage may be missing — check hosts and secrets; ${kept}`;
}
