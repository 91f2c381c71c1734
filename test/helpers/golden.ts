/**
 * Golden files for the codec tests (netboot's `packet_test.go` style): `actual` is compared with
 * `<dir>/<name>.golden`; `UPDATE_GOLDEN=1` writes it instead (review the diff before committing).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Asserts `actual` equals `<dir>/<name>.golden`, or writes it when UPDATE_GOLDEN=1. */
export function assertGoldenFile(dir: string, name: string, actual: string): void {
  const path = join(dir, `${name}.golden`);
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  assert.ok(existsSync(path), `golden file ${path} is missing; run with UPDATE_GOLDEN=1 and review it`);
  assert.equal(actual, readFileSync(path, 'utf8'));
}
