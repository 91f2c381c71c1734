/**
 * @module Child process of the controller tests: one rack's agent, the real store and sync loop
 * (wire version 2, `controller.url` as a list with failover, a rack token), pushing to real
 * controller processes. Mode `write`: ROUNDS rounds of updates to hosts `n0..n(HOSTS-1)` with one
 * event each, then drains. Mode `drain`: no writes. Either way it then waits until the outbox is
 * empty, every command outcome acknowledged and ALSO_WAIT ms passed without a new command, and
 * prints `DONE {"rv": {host: resourceVersion}}`. Each command it runs is appended to
 * STATE_DIR/runs.log (`<id>\n`, synced) before it returns, so the parent counts real runs.
 * Usage: node rack-child.js STATE_DIR RACK TOKEN URLS(comma) write|drain HOSTS ROUNDS ALSO_WAIT
 */
import { appendFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../../agent/store/index.js';
import { createSyncLoop } from '../../../agent/sync/index.js';
import { makeHost } from '../../unit/store/fixtures.js';

async function main(a: { stateDir: string; rack: string; token: string; urls: string[]; mode: string; hosts: number; rounds: number; alsoWaitMs: number }): Promise<void> {
  const store = await openStore({ stateDir: a.stateDir });
  let lastCommandAt = Date.now();
  const log = join(a.stateDir, 'runs.log');
  const loop = createSyncLoop({
    store, agentId: `${a.rack}-head`, rack: a.rack,
    controller: { url: a.urls[0] ?? '', urls: a.urls, token: a.token, intervalSeconds: 3600 },
    backoff: { baseMs: 50, capMs: 500 }, flushDelayMs: 5, maxHostsPerPush: 4, requestTimeoutMs: 5000,
    statusUrl: `http://${a.rack}.example.net:8080/`, agentVersion: 'test',
    runCommand: (command) => {
      appendFileSync(log, `${command.id}\n`);
      const fd = openSync(log, 'r');
      fsyncSync(fd);
      closeSync(fd);
      lastCommandAt = Date.now();
      return Promise.resolve({ outcome: 'done', message: `${command.kind} ran` });
    },
  });
  await loop.start();
  process.stdout.write('READY\n');
  if (a.mode === 'write') {
    for (let round = 0; round < a.rounds; round++) {
      for (let i = 0; i < a.hosts; i++) {
        const host = (await store.getHost(`n${i}`)) ?? makeHost(`n${i}`);
        host.spec.description = `round ${round}`;
        await store.commit([{ kind: 'host', op: 'put', object: host }]);
        await store.appendEvents([{ time: new Date().toISOString(), type: 'Normal', reason: 'Round', message: `round ${round}`, source: 'test', host: `n${i}` }]);
      }
      process.stdout.write(`ROUND ${round}\n`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  for (let i = 0; i < 6000; i++) {
    const s = loop.status();
    const quiet = Date.now() - lastCommandAt >= a.alsoWaitMs;
    if (s.backlog.hosts === 0 && s.backlog.events === 0 && s.inflight === null && s.lastAckAt !== null && quiet) {
      // One more push: it carries any outcome not yet reported, and fetches any new command.
      const after = await loop.syncNow();
      if (after.consecutiveFailures === 0 && after.backlog.hosts === 0 && after.backlog.events === 0 && Date.now() - lastCommandAt >= a.alsoWaitMs) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const rv: Record<string, string> = {};
  for (const host of await store.listHosts()) rv[host.metadata.name] = host.metadata.resourceVersion;
  process.stdout.write(`DONE ${JSON.stringify({ rv, status: loop.status() })}\n`);
  await loop.stop();
  await store.close();
}

const [stateDir, rack, token, urls, mode, hosts, rounds, alsoWait] = process.argv.slice(2);
if (stateDir === undefined || rack === undefined || token === undefined || urls === undefined || mode === undefined || hosts === undefined || rounds === undefined || alsoWait === undefined) {
  // Also reached when a test runner imports every .js under dist/test: do nothing.
  console.error('usage: rack-child STATE_DIR RACK TOKEN URLS write|drain HOSTS ROUNDS ALSO_WAIT_MS');
} else {
  main({ stateDir, rack, token, urls: urls.split(','), mode, hosts: Number(hosts), rounds: Number(rounds), alsoWaitMs: Number(alsoWait) }).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
