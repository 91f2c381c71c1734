/**
 * The storm simulator's HTTP client (test/lab/pxe-sim/http-fetch.ts): its response parser takes
 * heads and bodies however the bytes are split, counts Content-Length and chunked bodies, keeps
 * small ones, refuses non-200 answers and broken framing; and against a real server it reuses
 * one keep-alive connection for several GETs, as iPXE does.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { closeHttpSession, fetchHttp, openHttpSession, ResponseReader, type HttpFetchResult } from '../../lab/pxe-sim/http-fetch.js';

function parse(wire: string | Buffer, split: number[], keep = 1024): { result?: HttpFetchResult; error?: string } {
  const out: { result?: HttpFetchResult; error?: string } = {};
  const reader = new ResponseReader();
  reader.expect({ keep, done: (r) => { out.result = r; }, fail: (m) => { out.error = m; } });
  const bytes = Buffer.isBuffer(wire) ? wire : Buffer.from(wire, 'latin1');
  let at = 0;
  for (const cut of [...split, bytes.length]) {
    if (!reader.feed(bytes.subarray(at, cut))) break;
    at = cut;
  }
  return out;
}

const SCRIPT = '#!ipxe\nkernel http://x/vmlinuz\nboot\n';
const cases: Record<string, { wire: string; split: number[]; keep?: number; text?: string; bytes?: number; error?: RegExp }> = {
  'Content-Length in one piece': { wire: `HTTP/1.1 200 OK\r\nContent-Length: ${SCRIPT.length}\r\n\r\n${SCRIPT}`, split: [], text: SCRIPT },
  'head split inside the blank line': { wire: `HTTP/1.1 200 OK\r\nContent-Length: ${SCRIPT.length}\r\n\r\n${SCRIPT}`, split: [10, 35, 37], text: SCRIPT },
  'every byte apart': { wire: `HTTP/1.1 200 OK\r\ncontent-length: ${SCRIPT.length}\r\n\r\n${SCRIPT}`, split: Array.from({ length: 80 }, (_, i) => i + 1), text: SCRIPT },
  'chunked, split everywhere': { wire: `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n#!ipxe\n\r\n${(SCRIPT.length - 7).toString(16)};x=1\r\n${SCRIPT.slice(7)}\r\n0\r\n\r\n`, split: [5, 50, 51, 52, 60, 70, 90], text: SCRIPT },
  'a big body is counted, not kept': { wire: `HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n${'x'.repeat(5000)}`, split: [100, 4000], keep: 16, bytes: 5000 },
  'empty body': { wire: 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', split: [], text: '' },
  'a 404': { wire: 'HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno\n', split: [], error: /^HTTP 404$/ },
  'not HTTP': { wire: 'SSH-2.0-OpenSSH\r\n\r\n', split: [], error: /not an HTTP response/ },
  'bad chunk size': { wire: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', split: [], error: /bad chunk size/ },
  'head too long': { wire: `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(20_000)}`, split: [10_000], error: /head over/ },
};
for (const [name, c] of Object.entries(cases)) {
  test(`response reader: ${name}`, () => {
    const out = parse(c.wire, c.split, c.keep);
    if (c.error !== undefined) {
      assert.match(out.error ?? '', c.error);
      return;
    }
    assert.equal(out.error, undefined);
    const result = out.result;
    assert.ok(result !== undefined, 'a result');
    assert.equal(result.status, 200);
    if (c.text !== undefined) assert.equal(result.text, c.text);
    if (c.bytes !== undefined) {
      assert.equal(result.bytes, c.bytes);
      assert.equal(result.text, undefined);
    }
  });
}

test('a connection closed before the body ends fails the GET with the bytes that came', () => {
  const reader = new ResponseReader();
  let error = '';
  reader.expect({ keep: 0, done: () => undefined, fail: (m) => { error = m; } });
  reader.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789'));
  reader.ended();
  assert.equal(error, 'connection closed after 10 bytes');
});

test('against a real server: three GETs over one keep-alive connection, bodies checked; a 404 fails', async (t) => {
  const big = Buffer.alloc(3 * 1024 * 1024 + 7, 0x5a);
  const connections = new Set<unknown>();
  const server = createServer((req, res) => {
    connections.add(req.socket);
    if (req.url === '/boot.ipxe') res.end(SCRIPT);
    else if (req.url === '/initrd') res.end(big);
    else res.writeHead(404).end('no\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => { server.closeAllConnections(); server.close(); });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const session = openHttpSession('127.0.0.1');
  try {
    assert.equal((await fetchHttp(session, `${base}/boot.ipxe`, { idleMs: 5000, keepBodyBytes: 4096 })).text, SCRIPT);
    const got = await fetchHttp(session, `${base}/initrd`, { idleMs: 5000 });
    assert.deepEqual([got.status, got.bytes, got.contentLength], [200, big.length, big.length]);
    assert.equal((await fetchHttp(session, `${base}/initrd`, { idleMs: 5000 })).bytes, big.length);
    assert.equal(connections.size, 1, 'one connection for all three');
    await assert.rejects(fetchHttp(session, `${base}/nothing`, { idleMs: 5000 }), /HTTP 404/);
  } finally {
    closeHttpSession(session);
  }
});
