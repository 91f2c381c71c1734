/**
 * URL credentials and signed queries never reach the event log, `status.errorMessage` or the
 * log (found by test/integration/secret-scan.test.ts: an image URL
 * `http://user:pw@host/os.raw?X-Amz-Signature=…` was in the ImageProgress, ImageReady,
 * ProvisioningStarted and ProvisioningComplete events — `rackside get events`, the timelines, the
 * controller's summaries — while the status page already hid it).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setErrorMessage } from '../../agent/host/host-status.js';
import { createLogger } from '../../agent/log.js';
import { REDACTED_QUERY, redactedCopy, redactUrlSecrets, redactUrlSecretsDeep } from '../../agent/redact-text.js';
import { createMemoryStore } from '../../agent/store/index.js';
import { makeEvent, makeHost } from './store/fixtures.js';

const PW = 'canary-pw-31f9';
const SIG = 'canary-sig-77ab';
const URL = `http://ops:${PW}@images.example:8080/os.raw?X-Amz-Signature=${SIG}&X-Amz-Expires=600#part`;

const texts: Record<string, [string, string]> = {
  'credentials and query in a sentence': [`download ${URL}: 1 MiB`, `download http://***@images.example:8080/os.raw${REDACTED_QUERY}: 1 MiB`],
  'a query alone': ['https://h/x?sig=abc is ready', `https://h/x${REDACTED_QUERY} is ready`],
  'user-info alone, another scheme': [`redfish://root:${PW}@bmc/redfish/v1/Systems/1`, 'redfish://***@bmc/redfish/v1/Systems/1'],
  'several URLs, quoted': [`"http://a/b?c=1" and 'https://u:p@d/e'`, `"http://a/b${REDACTED_QUERY}" and 'https://***@d/e'`],
  'a plain URL is unchanged': ['GET http://10.0.0.1:8081/images/abc → 200', 'GET http://10.0.0.1:8081/images/abc → 200'],
  'a path with a query but no scheme is unchanged': ['GET /redfish/v1/Systems?$expand=.', 'GET /redfish/v1/Systems?$expand=.'],
  'an @ in the path is not user-info': ['http://h/a@b', 'http://h/a@b'],
  'inside braces and parentheses': ['{http://u:p@h/x?s=S} (https://h/y?t=T).', '{http://***@h/x?[redacted]} (https://h/y?[redacted]).'],
};
for (const [name, [input, shown]] of Object.entries(texts)) {
  test(`redactUrlSecrets: ${name}`, () => {
    assert.equal(redactUrlSecrets(input), shown);
  });
}

test('redactUrlSecretsDeep walks plain objects and arrays, keeps own __proto__ keys as keys, stops at 32 levels', () => {
  const value = JSON.parse(`{"a":["${URL}"],"b":{"c":"${URL}"},"__proto__":{"d":"${URL}"}}`) as unknown;
  const out = JSON.stringify(redactUrlSecretsDeep(value));
  assert.ok(!out.includes(PW) && !out.includes(SIG), out);
  assert.match(out, /"__proto__":\{"d":/);
  let deep: unknown = URL;
  for (let i = 0; i < 100; i++) deep = { x: deep };
  assert.doesNotThrow(() => redactUrlSecretsDeep(deep));
});

test('redactedCopy redacts as redactUrlSecretsDeep does and shares nothing with its input: class instances become redacted plain objects, Dates and deep parts are cloned', () => {
  class Source { constructor(readonly url: string) {} }
  const when = new Date(0);
  let deep: Record<string, unknown> = { leaf: [1] };
  for (let i = 0; i < 40; i++) deep = { x: deep };
  const input = { a: [URL, { b: URL }], source: new Source(URL), when, deep, n: 1, none: null };
  const copy = redactedCopy(input);
  assert.deepEqual(copy, redactUrlSecretsDeep(structuredClone(input)), 'the same result as cloning first');
  const text = JSON.stringify(copy);
  assert.ok(!text.includes(PW) && !text.includes(SIG), text);
  assert.equal(Object.getPrototypeOf(copy.source), Object.prototype);
  assert.ok(copy.when instanceof Date && copy.when !== when && copy.when.getTime() === 0);
  assert.notEqual(copy.a, input.a);
  assert.notEqual(copy.a[1], input.a[1]);
  let original: unknown = input.deep;
  let copied: unknown = copy.deep;
  for (let i = 0; i < 41; i++) {
    assert.notEqual(copied, original, `level ${i} is a copy`);
    original = (original as { x: unknown }).x;
    copied = (copied as { x: unknown }).x;
  }
  assert.equal(input.a[0], URL, 'the input is untouched');
});

test('the event log stores messages and data without URL credentials or queries', async () => {
  const store = createMemoryStore();
  try {
    const [stored] = await store.appendEvents([{ ...makeEvent('ImageReady', { host: 'n1' }), message: `${URL} is ready`, data: { url: URL, nested: [{ u: URL }] } }]);
    const listed = await store.listEvents({ host: 'n1' });
    for (const e of [stored, ...listed]) {
      const text = JSON.stringify(e);
      assert.ok(!text.includes(PW) && !text.includes(SIG), text);
    }
    assert.equal(listed[0]?.message, `http://***@images.example:8080/os.raw${REDACTED_QUERY} is ready`);
  } finally {
    await store.close();
  }
});

test('status.errorMessage is set without URL credentials or queries', () => {
  const host = makeHost('n1');
  setErrorMessage(host, 'provisioning error', `GET ${URL} answered HTTP 403`);
  assert.equal(host.status.errorMessage, `GET http://***@images.example:8080/os.raw${REDACTED_QUERY} answered HTTP 403`);
  assert.equal(host.status.errorCount, 1);
});

test('log lines lose URL credentials and queries in the message, in fields and in errors (with causes)', () => {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (l: string) => { lines.push(l); } } });
  const err = new Error('download failed', { cause: new Error(`GET ${URL} answered HTTP 404`) });
  log.warn({ err, image: { url: URL } }, `download of ${URL} failed`);
  log.info('%s done', URL);
  const text = lines.join('');
  assert.equal(lines.length, 2);
  assert.ok(!text.includes(PW) && !text.includes(SIG), text);
  assert.match(text, /"msg":"download of http:\/\/\*\*\*@images\.example:8080\/os\.raw\?\[redacted\] failed"/);
  assert.match(text, /answered HTTP 404/, 'the cause is still there');
});
