#!/usr/bin/env node
// Runs the compiled tests with node's built-in runner. Node 20's `--test DIR` runs every .js
// file under DIR (helpers included), so the *.test.js files are listed here explicitly.
// Usage: node scripts/run-tests.mjs [unit|integration|e2e|PATH-SUBSTRING ...]
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = 'dist/test';
/** @param {string} dir @returns {string[]} */
function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.test.js') ? [path] : [];
  });
}
const filters = process.argv.slice(2);
const files = walk(root)
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files under ${root} match ${filters.join(' ') || '(all)'}`);
  process.exit(1);
}
const concurrency = process.env.RACKSIDE_TEST_CONCURRENCY ?? '2';
// A hung test fails after 15 minutes (the slowest, QEMU e2e, take 2–6) instead of holding CI.
const timeoutMs = process.env.RACKSIDE_TEST_TIMEOUT_MS ?? '900000';
// TAP goes to stdout as it happens; the failures are repeated on stderr at the very end, where
// a log cut to its tail still shows them.
const reporters = [
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${new URL('./failure-summary-reporter.mjs', import.meta.url).href}`,
  '--test-reporter-destination=stderr',
];
// Agents the tests start bring their own ramdisk (or none): they neither build one in the
// background nor make hosts wait for it (agent/main.ts reads RACKSIDE_RAMDISK_BUILD). A test of
// the build itself asks for it explicitly (test/e2e/getting-started.test.ts).
const env = { ...process.env, RACKSIDE_RAMDISK_BUILD: process.env.RACKSIDE_RAMDISK_BUILD ?? 'off' };
const run = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, ...reporters, ...files],
  { stdio: 'inherit', env },
);
process.exit(run.status ?? 1);
