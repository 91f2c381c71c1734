/**
 * `rackside controller` argument handling (agent/cli/fleet.ts `controllerCommand`): `--auth
 * cert|token` reaches runController for `racks add|rotate` only; any other value, or `--auth`
 * with another controller command, is a usage error (exit 2) and runs nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunControllerOptions } from '../../../agent/cli/io.js';
import { runCli } from '../../../agent/cli/run.js';
import { captureCliIo } from '../../helpers/cli-io.js';

async function controller(args: string[]): Promise<{ code: number; err: string; calls: RunControllerOptions[] }> {
  const calls: RunControllerOptions[] = [];
  const h = captureCliIo('http://127.0.0.1:1', 0, { runController: (o) => { calls.push(o); return Promise.resolve(0); } });
  const code = await runCli(['controller', ...args], h.io);
  return { code, err: h.err(), calls };
}

test('racks add|rotate --auth cert reaches the controller; without --auth none is passed', async () => {
  const add = await controller(['racks', 'add', 'rack1', '--auth', 'cert', '--config', '/c.yaml']);
  assert.equal(add.code, 0, add.err);
  assert.deepEqual(add.calls.map((c) => [c.configPath, c.action, c.auth]), [['/c.yaml', ['racks', 'add', 'rack1'], 'cert']]);
  const rotate = await controller(['racks', 'rotate', 'rack1', '--auth', 'token', '--config', '/c.yaml']);
  assert.deepEqual(rotate.calls.map((c) => c.auth), ['token']);
  const plain = await controller(['racks', 'add', 'rack1', '--config', '/c.yaml']);
  assert.equal(plain.calls.length, 1);
  assert.equal('auth' in (plain.calls[0] ?? {}), false);
});

test('--auth with another value or another controller command is a usage error', async () => {
  for (const args of [['racks', 'add', 'rack1', '--auth', 'x509'], ['racks', 'revoke', 'rack1', '--auth', 'cert'], ['--auth', 'cert'], ['racks', 'list', '--auth', 'cert']]) {
    const r = await controller([...args, '--config', '/c.yaml']);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.err, /--auth/);
    assert.deepEqual(r.calls, [], `${args.join(' ')}: nothing ran`);
  }
});
