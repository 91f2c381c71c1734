/**
 * @module Golden-file comparison for rendered boot scripts: files live in test/fixtures/ipxe/;
 * run with RACKSIDE_UPDATE_GOLDEN=1 to rewrite them after an intended change (then review the diff).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/fixtures/ipxe in the source tree (tests run from dist/test/...). */
export const GOLDEN_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../../test/fixtures/ipxe');

/** Asserts `actual` equals the golden file `name` (or writes it when updating). */
export function assertGolden(name: string, actual: string): void {
  const path = join(GOLDEN_DIR, name);
  if (process.env.RACKSIDE_UPDATE_GOLDEN === '1') {
    writeFileSync(path, actual);
    return;
  }
  assert.ok(existsSync(path), `golden file ${path} is missing; run with RACKSIDE_UPDATE_GOLDEN=1 to create it`);
  assert.equal(actual, readFileSync(path, 'utf8'), `rendered output differs from ${name}`);
}
