/**
 * @module Quick commit-rate measurement of the LevelDB store (not a test: no assertions).
 * Usage: node dist/test/bench/store-commit.bench.js [SINGLE_COMMITS] [BATCHES]
 * Prints sequential single-host commits/s, 100-host batch commits/s (and hosts/s), and the
 * rate of host+secret pair commits (each pays one AES-GCM seal).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openStore, type Change } from '../../agent/store/index.js';
import { makeHost, makeSecret } from '../unit/store/fixtures.js';

async function measure(label: string, n: number, unitsPerOp: number, op: (i: number) => Promise<unknown>): Promise<void> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await op(i);
  const seconds = (performance.now() - start) / 1000;
  const perOp = (n / seconds).toFixed(0);
  const perUnit = ((n * unitsPerOp) / seconds).toFixed(0);
  console.log(`${label}: ${n} commits in ${seconds.toFixed(2)} s = ${perOp} commits/s${unitsPerOp > 1 ? `, ${perUnit} hosts/s` : ''}`);
}

async function main(): Promise<void> {
  const single = Number(process.argv[2] ?? 500);
  const batches = Number(process.argv[3] ?? 20);
  const stateDir = await mkdtemp(join(tmpdir(), 'rackside-bench-'));
  const store = await openStore({ stateDir });
  try {
    await measure('sequential single-host commit (synced)', single, 1, (i) =>
      store.commit([{ kind: 'host', op: 'put', object: makeHost(`single-${i}`), ifVersion: 'absent' }]),
    );
    await measure('sequential update with ifVersion (synced)', single, 1, async (i) => {
      const host = await store.getHost(`single-${i}`);
      if (host === undefined) throw new Error('missing');
      return store.commit([{ kind: 'host', op: 'put', object: host, ifVersion: host.metadata.resourceVersion }]);
    });
    await measure('100-host batch commit (synced)', batches, 100, (b) =>
      store.commit(
        Array.from({ length: 100 }, (_, i): Change => ({ kind: 'host', op: 'put', object: makeHost(`batch-${b}-${i}`) })),
      ),
    );
    await measure('host+secret pair commit (synced, encrypted)', single, 1, (i) =>
      store.commit([
        { kind: 'secret', op: 'put', object: makeSecret(`pair-${i}-bmc`, { username: 'admin', password: 'pw' }) },
        { kind: 'host', op: 'put', object: makeHost(`pair-${i}`) },
      ]),
    );
    const concurrent = performance.now();
    await Promise.all(
      Array.from({ length: single }, (_, i) => store.commit([{ kind: 'host', op: 'put', object: makeHost(`conc-${i}`) }])),
    );
    const s = (performance.now() - concurrent) / 1000;
    console.log(`${single} concurrent single-host commits (serialized): ${(single / s).toFixed(0)} commits/s`);
  } finally {
    await store.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
