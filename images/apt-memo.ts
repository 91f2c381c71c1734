/**
 * @module Remembered `apt-cache` answers. Each `apt-cache` call parses the package lists —
 * seconds on a loaded two-core machine — yet its answers (a candidate version, a package's
 * dependencies) cannot change while the lists stay the same. So answers are kept in a JSON file
 * together with a stamp of the lists directory (names, sizes, mtimes of its files) and reused
 * until the stamp changes: `apt-get update` invalidates them. Used by foreign-apt.ts for its
 * private lists, and by the test lab for the machine's own.
 */
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Where a scope's lists live and where its answers are kept. */
export interface AptMemoScope {
  listsDir: string;
  memoFile: string;
}

/** A stamp of `listsDir`: answers cannot change while it stays the same. */
async function listsStamp(listsDir: string): Promise<string> {
  const names = (await readdir(listsDir).catch(() => [] as string[])).filter((n) => n !== 'lock' && n !== 'partial' && n !== 'auxfiles').sort();
  const parts = await Promise.all(names.map(async (n) => {
    const s = await stat(join(listsDir, n)).catch(() => undefined);
    return `${n}:${s?.size ?? '?'}:${s?.mtimeMs ?? '?'}`;
  }));
  return parts.join('\n');
}

/** The answer to `key` in `scope`, computed (and remembered) when the lists changed since it was kept. */
export async function aptAnswer(scope: AptMemoScope, key: string, compute: () => Promise<string>): Promise<string> {
  const stamp = await listsStamp(scope.listsDir);
  const memo = await readFile(scope.memoFile, 'utf8').then((t) => JSON.parse(t) as { stamp: string; answers: Record<string, string> }, () => undefined);
  const answers = memo?.stamp === stamp ? memo.answers : {};
  const known = answers[key];
  if (known !== undefined) return known;
  const value = await compute();
  // Read-modify-write without a lock: a concurrently lost entry is only computed again next time.
  await mkdir(dirname(scope.memoFile), { recursive: true });
  const tmp = `${scope.memoFile}.${process.pid}`;
  await writeFile(tmp, JSON.stringify({ stamp, answers: { ...answers, [key]: value } }));
  await rename(tmp, scope.memoFile);
  return value;
}
