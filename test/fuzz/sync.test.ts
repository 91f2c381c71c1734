/**
 * Fuzzes what the agent reads from its central controller (agent/sync): the acknowledgement
 * decoder `decodePushResponse`, `parseRetryAfterMs`, the push-request decoder the outbox and a
 * controller use (`decodePushRequest`), and the whole `ControllerClient.push` over loopback HTTP
 * against a controller answering mutated bodies, statuses, `Retry-After` and `Content-Encoding`
 * headers, gzip bodies (valid, damaged, bombs). The decoders may only throw SyncWireError and an
 * accepted acknowledgement is exactly the pushed sequence; `Retry-After` reads as undefined or a
 * delay ≥ 0; a push resolves with its acknowledgement or rejects with a SyncFailure — nothing else.
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=120000 node --test dist/test/fuzz/sync.test.js`.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { parseRetryAfterMs } from '../../agent/sync/backoff.js';
import { ControllerClient, SyncFailure } from '../../agent/sync/http-push.js';
import { summarizeEvent, summarizeHost } from '../../agent/sync/summarize.js';
import { decodePushRequest, decodePushResponse, encodePushRequest, type PushRequest } from '../../wire/push.js';
import { SyncWireError } from '../../wire/read.js';
import { makeHost } from '../unit/store/fixtures.js';
import { richHost } from '../unit/sync/fixtures.js';
import type { Dice } from './dice.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateBytes, showBytes } from './mutate-bytes.js';
import { mutateJson, mutateJsonText, ODD_STRINGS, type Json } from './mutate-json.js';
import { showText } from './mutate-text.js';

const INPUTS = fuzzInputs(6000);
const NOW_MS = Date.parse('2026-01-02T03:04:05Z');

const PUSH: PushRequest = {
  version: 1, agentId: 'rack1-head', rack: 'rack1', streamId: 'stream-1', sequence: 7, sentAt: '2026-01-02T03:04:05.000Z',
  hosts: [summarizeHost(richHost('node-1')), summarizeHost(makeHost('fresh'))],
  deletedHosts: [{ namespace: 'default', name: 'gone' }],
  events: [summarizeEvent({ seq: 3, time: '2026-01-02T03:04:05Z', type: 'Normal', reason: 'Registered', message: 'ok', source: 'test', host: 'node-1' })],
  bootServices: { dhcp: { healthy: true, counters: { offers: 3 } }, tftp: { healthy: false, message: 'port in use' } },
};
const PUSH_JSON = JSON.parse(encodePushRequest(PUSH)) as Json;
const ACKS: readonly Json[] = [{ acknowledged: 7 }, { acknowledged: 7, note: 'duplicate' }, { acknowledged: 6 }, { status: 'ok' }];
const RETRY_AFTER = ['120', '0', 'Fri, 02 Jan 2026 03:05:05 GMT', 'Wed, 21 Oct 2015 07:28:00 GMT', '-1', '1.5', ' 7 ', '9'.repeat(400), 'soon', ''];
const json = { seeds: [...ACKS, PUSH_JSON], keys: ['acknowledged', 'version', 'agentId', 'sequence', 'hosts', 'events', 'deletedHosts', 'bootServices', 'sentAt'], strings: ['7', '2026-01-02T03:04:05Z'] };

type SyncInput =
  | { readonly kind: 'response'; readonly text: string; readonly sequence: number; readonly retryAfter: string }
  | { readonly kind: 'request'; readonly text: string }
  | { readonly kind: 'push'; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: Buffer };

let current: Extract<SyncInput, { kind: 'push' }> | undefined;
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  req.resume();
  req.on('end', () => {
    const answer = current ?? { status: 503, headers: {}, body: Buffer.alloc(0) };
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
});
let client: ControllerClient | undefined;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/push`;
  client = new ControllerClient({ url, token: 'fuzz', intervalSeconds: 30 }, { requestTimeoutMs: 5000, maxResponseBytes: 65_536, userAgent: 'rackside-fuzz', nowMs: () => NOW_MS });
});
after(async () => {
  await client?.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
});

function generate(dice: Dice, i: number): SyncInput {
  switch (i % 4) {
    case 0: case 1: {
      const seed = dice.pick(ACKS);
      const text = dice.chance(0.7) ? JSON.stringify(mutateJson(dice, seed, json)) : mutateJsonText(dice, seed, json);
      return { kind: 'response', text, sequence: dice.pick([7, 7, 1, 0, 2 ** 53 - 1]), retryAfter: dice.chance(0.7) ? dice.pick(RETRY_AFTER) : dice.pick(ODD_STRINGS) };
    }
    case 2:
      return { kind: 'request', text: dice.chance(0.8) ? JSON.stringify(mutateJson(dice, PUSH_JSON, json)) : mutateJsonText(dice, PUSH_JSON, json) };
    default: {
      let body: Buffer = Buffer.from(dice.chance(0.6) ? JSON.stringify(mutateJson(dice, dice.pick(ACKS), json)) : JSON.stringify(dice.pick(ACKS)), 'utf8');
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const encoding = dice.pick(['identity', 'identity', 'gzip', 'gzip', 'br', 'deflate', 'GZIP', 'gzip, gzip', '']);
      if (encoding !== 'identity') headers['content-encoding'] = encoding;
      if (encoding.toLowerCase().includes('gzip')) {
        body = dice.chance(0.1) ? gzipSync(Buffer.alloc(dice.size(4 * 1024 * 1024))) : gzipSync(body); // sometimes a bomb
        if (dice.chance(0.3)) body = mutateBytes(dice, body, { seeds: [body], maxBytes: body.length + 64 });
      } else if (dice.chance(0.2)) body = mutateBytes(dice, body, { seeds: [body], maxBytes: 200_000 });
      if (dice.chance(0.5)) headers['retry-after'] = dice.pick(RETRY_AFTER);
      const status = dice.chance(0.6) ? 200 : dice.pick([201, 202, 204, 301, 400, 401, 403, 404, 409, 413, 429, 500, 503]);
      return { kind: 'push', status, headers, body };
    }
  }
}

async function check(input: SyncInput): Promise<string> {
  if (input.kind === 'response') {
    const retry = parseRetryAfterMs(input.retryAfter, NOW_MS);
    assert.ok(retry === undefined || retry >= 0, `Retry-After ${JSON.stringify(input.retryAfter)} read as ${String(retry)}`);
    try {
      const ack = decodePushResponse(input.text, input.sequence);
      assert.equal(ack.acknowledged, input.sequence, 'an accepted acknowledgement is the pushed sequence');
      return 'ack accepted';
    } catch (err) {
      if (!(err instanceof SyncWireError)) throw err;
      return 'ack refused';
    }
  }
  if (input.kind === 'request') {
    try {
      const request = decodePushRequest(input.text);
      assert.deepEqual(decodePushRequest(encodePushRequest(request)), request, 'a decoded request re-encodes to itself');
      return 'request accepted';
    } catch (err) {
      if (!(err instanceof SyncWireError)) throw err;
      return 'request refused';
    }
  }
  current = input;
  try {
    const ack = await (client as ControllerClient).push(PUSH, new AbortController().signal);
    assert.equal(ack.acknowledged, PUSH.sequence);
    return 'push acknowledged';
  } catch (err) {
    if (!(err instanceof SyncFailure)) throw err;
    assert.ok(err.retryAfterMs === undefined || err.retryAfterMs >= 0);
    return `push ${err.code}`;
  }
}

function show(input: SyncInput): string {
  if (input.kind === 'push') return `push answered ${input.status} ${JSON.stringify(input.headers)} ${showBytes(input.body, 512)}`;
  return `${input.kind} ${input.kind === 'response' ? `(sequence ${input.sequence}, Retry-After ${JSON.stringify(input.retryAfter)}) ` : ''}${showText(input.text)}`;
}

test(`fuzz sync: ${INPUTS} controller answers, push requests and whole pushes`, async (t) => {
  const report = await runFuzz<SyncInput>({ name: 'sync', seed: fuzzSeed(0x5c), inputs: INPUTS, generate, check, show });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  for (const outcome of ['ack accepted', 'ack refused', 'request accepted', 'request refused', 'push acknowledged', 'push bad-response', 'push http-status']) {
    assert.ok((report.outcomes[outcome] ?? 0) > 0, `no input ended "${outcome}"`);
  }
});
