/** LazyBuild (agent/store/lazy-build.ts): one build shared by concurrent callers, kept; a failed build is tried again. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LazyBuild } from '../../../agent/store/lazy-build.js';

test('concurrent callers share one build; its value is kept and served without building again', async () => {
  const lazy = new LazyBuild<number>();
  let builds = 0;
  const build = (): Promise<number> => { builds += 1; return new Promise((resolve) => setImmediate(() => { resolve(42); })); };
  assert.equal(lazy.value, undefined);
  assert.deepEqual(await Promise.all([lazy.get(build), lazy.get(build)]), [42, 42]);
  assert.equal(await lazy.get(build), 42);
  assert.equal(builds, 1);
  assert.equal(lazy.value, 42);
});

test('a failed build is forgotten: its callers see the error, the next call builds again', async () => {
  const lazy = new LazyBuild<string>();
  await assert.rejects(lazy.get(() => Promise.reject(new Error('scan failed'))), /scan failed/);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(lazy.value, undefined);
  assert.equal(await lazy.get(() => Promise.resolve('ok')), 'ok');
});
