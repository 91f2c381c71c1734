/**
 * @module The ramdisk posts a report (inventory, result) again until rackside takes it (found by
 * test/e2e/provision-crash.test.ts: an agent killed while the ramdisk inspected lost the
 * inventory, and the host waited for the inspection's timeout — the ramdisk had finished, and
 * its next heartbeats named the command as done, so rackside sent nothing more). A refused
 * connection or a cut one is retried; a refusal (HTTP 4xx) is final; the retries are bounded.
 * When rackside was down for longer than that, its next heartbeat answer is `command=report`
 * and the saved report goes again (or an error result says there is none).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fakeEnv, runAgent } from './agent-harness.js';
import { requireTools, scratchDir } from './helpers.js';

const token = 'tok_0123456789abcdef';

/** Runs `once` against a server whose answer to the n-th report (0-based) `report(n)` decides. */
async function runOnce(
  command: string, report: (n: number, req: IncomingMessage, res: ServerResponse) => void, attempts: number, prepare?: (env: Record<string, string>) => void,
): Promise<{ stdout: string; code: number | null; paths: string[]; bodies: string[] }> {
  const { dir, cleanup } = scratchDir('agent-report');
  const paths: string[] = [];
  const bodies: string[] = [];
  let reports = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      paths.push(req.url ?? '');
      bodies.push(Buffer.concat(chunks).toString());
      if (req.url === '/ramdisk/v1/heartbeat') res.writeHead(200).end(`command=${command}\ncommand_id=c-9\n`);
      else report(reports++, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const base = fakeEnv(dir);
    const etc = base.RACKSIDE_ETC ?? '';
    const env: Record<string, string> = { ...base, RACKSIDE_REPORT_ATTEMPTS: String(attempts), RACKSIDE_REPORT_RETRY_SECONDS: '0' };
    writeFileSync(join(etc, 'url'), `http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
    writeFileSync(join(etc, 'token'), `${token}\n`);
    prepare?.(env);
    const r = await runAgent(['once'], env);
    return { ...r, paths, bodies };
  } finally {
    server.closeAllConnections();
    server.close();
    cleanup();
  }
}

test('an inventory whose connection is cut twice (an agent restarting) arrives on the third attempt', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const r = await runOnce('inspect', (n, req, res) => { if (n < 2) req.socket.destroy(); else res.writeHead(200).end('ok=1\n'); }, 5);
  assert.equal(r.code, 0, r.stdout);
  assert.deepEqual(r.paths, ['/ramdisk/v1/heartbeat', '/ramdisk/v1/inventory', '/ramdisk/v1/inventory', '/ramdisk/v1/inventory']);
  assert.equal(r.stdout.match(/did not take the report; again in 0 s/g)?.length, 2, r.stdout);
  assert.match(r.stdout, /inspect: inventory sent/);
});

test('a result refused with HTTP 401 is not posted again', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const r = await runOnce('no-such-command', (_n, _req, res) => { res.writeHead(401).end('error=unauthorized\n'); }, 5);
  assert.deepEqual(r.paths, ['/ramdisk/v1/heartbeat', '/ramdisk/v1/result']);
  assert.match(r.stdout, /could not report the result of no-such-command/);
});

test('the retries are bounded: with nobody taking the report, it gives up after the attempts', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const r = await runOnce('inspect', (_n, req) => { req.socket.destroy(); }, 3);
  assert.deepEqual(r.paths.filter((p) => p === '/ramdisk/v1/inventory').length, 3);
  assert.match(r.stdout, /inspect: sending the inventory failed/);
});

/** Writes a file the ramdisk saved earlier into its run directory. */
function save(env: Record<string, string>, name: string, text: string): void {
  const run = env.RACKSIDE_RUN ?? '';
  mkdirSync(run, { recursive: true });
  writeFileSync(join(run, name), text);
}

test('command=report posts the saved inventory of that command again, byte for byte', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const saved = '{"command_id":"c-9","inventory":{"cpu":{"count":2}}}\n';
  const r = await runOnce('report', (_n, _req, res) => { res.writeHead(200).end('ok=1\n'); }, 3, (env) => {
    save(env, 'inventory.json', saved);
    save(env, 'result.json', '{"command_id":"c-8","command":"clean","status":"ok"}\n');
  });
  assert.equal(r.code, 0, r.stdout);
  assert.deepEqual(r.paths, ['/ramdisk/v1/heartbeat', '/ramdisk/v1/inventory']);
  assert.equal(r.bodies[1], saved);
  assert.match(r.stdout, /report: sending the inventory of c-9 again, as asked/);
});

test('command=report without a saved report of that command answers an error result naming it', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const r = await runOnce('report', (_n, _req, res) => { res.writeHead(200).end('ok=1\n'); }, 3, (env) => {
    save(env, 'result.json', '{"command_id":"c-8","command":"clean","status":"ok"}\n');
  });
  assert.deepEqual(r.paths, ['/ramdisk/v1/heartbeat', '/ramdisk/v1/result']);
  const body = JSON.parse(r.bodies[1] ?? '') as Record<string, unknown>;
  assert.equal(body.command_id, 'c-9');
  assert.equal(body.command, 'report');
  assert.equal(body.status, 'error');
  assert.match(String(body.message), /no saved report of command c-9/);
});
