/**
 * @module Child process for test/integration/store-crash.test.ts: opens the store in the given
 * state directory and starts N concurrent commits, each writing a host and its BMC secret
 * together, printing `ACK <name>` after each commit resolves. The parent SIGKILLs it mid-way.
 * Usage: node store-crash-writer.js STATE_DIR PREFIX COUNT
 */
import { openStore } from '../../agent/store/index.js';
import { makeHost, makeSecret } from '../unit/store/fixtures.js';

async function main(stateDir: string, prefix: string, count: number): Promise<void> {
  const store = await openStore({ stateDir });
  process.stdout.write('READY\n');
  const commits = Array.from({ length: count }, async (_, i) => {
    const name = `${prefix}-${String(i).padStart(3, '0')}`;
    await store.commit([
      { kind: 'secret', op: 'put', object: makeSecret(`${name}-bmc`, { username: 'admin', password: `pw-${name}` }), ifVersion: 'absent' },
      { kind: 'host', op: 'put', object: makeHost(name), ifVersion: 'absent' },
    ]);
    process.stdout.write(`ACK ${name}\n`);
  });
  await Promise.all(commits);
  process.stdout.write('DONE\n');
  await store.close();
}

const [stateDir, prefix, countText] = process.argv.slice(2);
if (stateDir === undefined || prefix === undefined || countText === undefined) {
  // Also reached when a test runner imports every .js under dist/test: do nothing.
  console.error('usage: store-crash-writer STATE_DIR PREFIX COUNT');
} else {
  main(stateDir, prefix, Number(countText)).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
