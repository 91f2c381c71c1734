/**
 * @module Child process for test/integration/sync-crash.test.ts: an "agent" that opens the
 * LevelDB store in STATE_DIR and runs the sync loop against CONTROLLER_URL.
 * Mode `write`: updates hosts `node-0..node-(HOSTS-1)` round after round (printing `COMMIT`
 * after each) until the parent SIGKILLs it. Mode `drain`: no writes; prints `DRAINED` once the
 * outbox is empty and acknowledged, then exits.
 * Usage: node sync-agent-child.js STATE_DIR CONTROLLER_URL write|drain HOSTS
 */
import { openStore } from '../../agent/store/index.js';
import { createSyncLoop } from '../../agent/sync/index.js';
import { makeHost } from '../unit/store/fixtures.js';

async function main(stateDir: string, url: string, mode: string, hosts: number): Promise<void> {
  const store = await openStore({ stateDir });
  const loop = createSyncLoop({
    store,
    agentId: 'rack1-head',
    controller: { url, intervalSeconds: 3600 },
    backoff: { baseMs: 10, capMs: 100 },
    flushDelayMs: 5,
    maxHostsPerPush: 3,
  });
  await loop.start();
  process.stdout.write('READY\n');
  if (mode === 'write') {
    for (let round = 0; round < 100_000; round++) {
      for (let i = 0; i < hosts; i++) {
        const host = (await store.getHost(`node-${i}`)) ?? makeHost(`node-${i}`);
        host.spec.description = `round ${round}`;
        await store.commit([{ kind: 'host', op: 'put', object: host }]);
        process.stdout.write('COMMIT\n');
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } else {
    for (let i = 0; i < 2000; i++) {
      const s = loop.status();
      if (s.backlog.hosts === 0 && s.backlog.events === 0 && s.inflight === null && s.lastAckAt !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    process.stdout.write(`DRAINED ${JSON.stringify(loop.status())}\n`);
  }
  await loop.stop();
  await store.close();
}

const [stateDir, url, mode, hosts] = process.argv.slice(2);
if (stateDir === undefined || url === undefined || mode === undefined || hosts === undefined) {
  // Also reached when a test runner imports every .js under dist/test: do nothing.
  console.error('usage: sync-agent-child STATE_DIR CONTROLLER_URL write|drain HOSTS');
} else {
  main(stateDir, url, mode, Number(hosts)).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
