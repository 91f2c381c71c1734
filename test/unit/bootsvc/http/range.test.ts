import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentTypeFor, fileEtag, httpDate, parseRange, planFileResponse, type FileRequestHeaders, type FileResponsePlan } from '../../../../bootsvc/http/range.js';

const facts = { size: 10_000, mtimeMs: 1_700_000_000_123 };
const etag = fileEtag(facts);
const lastModified = httpDate(facts.mtimeMs);

test('validators: a strong ETag from size and mtime, Last-Modified at whole seconds', () => {
  assert.equal(etag, `"2710-${Math.floor(facts.mtimeMs).toString(16)}"`);
  assert.equal(lastModified, 'Tue, 14 Nov 2023 22:13:20 GMT');
  assert.notEqual(fileEtag({ ...facts, size: 10_001 }), etag);
});

const ranges: Record<string, [string | undefined, ReturnType<typeof parseRange>]> = {
  'absent': [undefined, { kind: 'none' }],
  'first KiB': ['bytes=0-1023', { kind: 'range', start: 0, end: 1023 }],
  'open end': ['bytes=9000-', { kind: 'range', start: 9000, end: 9999 }],
  'end past the size is clamped': ['bytes=9000-20000', { kind: 'range', start: 9000, end: 9999 }],
  'suffix': ['bytes=-100', { kind: 'range', start: 9900, end: 9999 }],
  'suffix longer than the file': ['bytes=-20000', { kind: 'range', start: 0, end: 9999 }],
  'start past the end': ['bytes=10000-', { kind: 'unsatisfiable' }],
  'zero suffix': ['bytes=-0', { kind: 'unsatisfiable' }],
  'multiple ranges are ignored': ['bytes=0-1,5-6', { kind: 'none' }],
  'other unit ignored': ['items=0-1', { kind: 'none' }],
  'malformed ignored': ['bytes=a-b', { kind: 'none' }],
  'reversed ignored': ['bytes=5-1', { kind: 'none' }],
  'spaces tolerated': [' bytes = 1 - 2 ', { kind: 'range', start: 1, end: 2 }],
};
for (const [name, [header, expected]] of Object.entries(ranges)) {
  test(`Range: ${name}`, () => {
    assert.deepEqual(parseRange(header, facts.size), expected);
  });
}

interface Case {
  method?: string;
  headers: FileRequestHeaders;
  status: FileResponsePlan['status'];
  body?: { start: number; end: number };
  contentRange?: string;
  contentLength?: string;
}
const cases: Record<string, Case> = {
  'plain GET': { headers: {}, status: 200, body: { start: 0, end: 9999 }, contentLength: '10000' },
  'HEAD: headers, no body': { method: 'HEAD', headers: {}, status: 200, contentLength: '10000' },
  'HEAD with Range: 206 headers, no body': { method: 'HEAD', headers: { range: 'bytes=0-9' }, status: 206, contentRange: 'bytes 0-9/10000', contentLength: '10' },
  'range': { headers: { range: 'bytes=0-1023' }, status: 206, body: { start: 0, end: 1023 }, contentRange: 'bytes 0-1023/10000', contentLength: '1024' },
  'tail range': { headers: { range: 'bytes=-16' }, status: 206, body: { start: 9984, end: 9999 }, contentRange: 'bytes 9984-9999/10000' },
  'unsatisfiable': { headers: { range: 'bytes=20000-' }, status: 416, contentRange: 'bytes */10000', contentLength: '0' },
  'If-Range with the current ETag': { headers: { 'range': 'bytes=0-9', 'if-range': etag }, status: 206, body: { start: 0, end: 9 }, contentRange: 'bytes 0-9/10000' },
  'If-Range with a stale ETag: full 200': { headers: { 'range': 'bytes=0-9', 'if-range': '"stale"' }, status: 200, body: { start: 0, end: 9999 } },
  'If-Range with a weak ETag never matches': { headers: { 'range': 'bytes=0-9', 'if-range': `W/${etag}` }, status: 200, body: { start: 0, end: 9999 } },
  'If-Range with Last-Modified': { headers: { 'range': 'bytes=0-9', 'if-range': lastModified }, status: 206, body: { start: 0, end: 9 }, contentRange: 'bytes 0-9/10000' },
  'If-Range with an older date: full 200': { headers: { 'range': 'bytes=0-9', 'if-range': httpDate(facts.mtimeMs - 5000) }, status: 200, body: { start: 0, end: 9999 } },
  'If-None-Match current: 304': { headers: { 'if-none-match': etag }, status: 304 },
  'If-None-Match weak form of current: 304': { headers: { 'if-none-match': `"x", W/${etag}` }, status: 304 },
  'If-None-Match other: 200': { headers: { 'if-none-match': '"x"' }, status: 200, body: { start: 0, end: 9999 } },
  'If-Modified-Since at mtime: 304': { headers: { 'if-modified-since': lastModified }, status: 304 },
  'If-Modified-Since earlier: 200': { headers: { 'if-modified-since': httpDate(facts.mtimeMs - 60_000) }, status: 200, body: { start: 0, end: 9999 } },
  'If-None-Match wins over If-Modified-Since': { headers: { 'if-none-match': '"x"', 'if-modified-since': lastModified }, status: 200, body: { start: 0, end: 9999 } },
  'If-Match other: 412': { headers: { 'if-match': '"x"' }, status: 412 },
  'If-Match star: 200': { headers: { 'if-match': '*' }, status: 200, body: { start: 0, end: 9999 } },
  'If-Unmodified-Since earlier: 412': { headers: { 'if-unmodified-since': httpDate(facts.mtimeMs - 60_000) }, status: 412 },
};
for (const [name, c] of Object.entries(cases)) {
  test(`response: ${name}`, () => {
    const plan = planFileResponse(c.method ?? 'GET', c.headers, facts, 'application/octet-stream');
    assert.equal(plan.status, c.status);
    assert.deepEqual(plan.body, c.body);
    assert.equal(plan.headers['Content-Range'], c.contentRange);
    if (c.contentLength !== undefined) assert.equal(plan.headers['Content-Length'], c.contentLength);
    assert.equal(plan.headers.ETag, etag);
    if (c.status === 200 || c.status === 206) assert.equal(plan.headers['Accept-Ranges'], 'bytes');
  });
}

test('an empty file: 200 with no body, ranges ignored', () => {
  const plan = planFileResponse('GET', { range: 'bytes=0-10' }, { size: 0, mtimeMs: 0 }, 'text/plain');
  assert.equal(plan.status, 200);
  assert.equal(plan.body, undefined);
  assert.equal(plan.headers['Content-Length'], '0');
});

test('content types', () => {
  assert.equal(contentTypeFor('ipxe.efi'), 'application/octet-stream');
  assert.equal(contentTypeFor('images/live.ISO'), 'application/x-iso9660-image');
  assert.equal(contentTypeFor('grub/grub.cfg'), 'text/plain; charset=utf-8');
  assert.equal(contentTypeFor('vmlinuz'), 'application/octet-stream');
});
