/**
 * Erase records: the document (id, fields, exact text), the book (signed once, first write wins,
 * listed newest first and by host, kept in the store), and the ramdisk API writing one before it
 * acknowledges a clean result — a failed write answers 500 and leaves the clean current, so the
 * ramdisk's retry records it once.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import express from 'express';
import { checkEraseKey } from '../../../agent/doctor/checks-host.js';
import { probeEraseKey } from '../../../agent/doctor/probes.js';
import { EraseRecordBook } from '../../../agent/erase/book.js';
import { ERASE_SIGNING_KEY_FILE, openEraseRecordBook } from '../../../agent/erase/open.js';
import { createEraseRecorder } from '../../../agent/erase/recorder.js';
import { buildEraseRecord, encodeEraseRecord, ERASE_RECORD_ID, ERASE_RECORD_NAMESPACE, eraseRecordId, eraseRecordOutcome, type EraseRecordInput } from '../../../agent/erase/record.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { RAMDISK_TOKEN_GRACE_MS } from '../../../agent/provisioner/local/node.js';
import { createRamdiskRouter } from '../../../agent/provisioner/local/ramdisk-service.js';
import { ed25519SigningKeyFromOpenSsh, signSshsig, verifySshsig } from '../../../agent/ssh/index.js';
import { generateEd25519Key } from '../../../agent/ssh/host-key.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import type { CleanResultDetails } from '../../../images/index.js';
import { listenOnLoopback } from '../../helpers/listen.js';

const disk = (name: string, over: Partial<CleanResultDetails['disks'][number]> = {}): CleanResultDetails['disks'][number] => ({
  name, serial: `S-${name}`, wwn: '0x5000c5001234abcd', model: 'QEMU HARDDISK', sizeBytes: 8_589_934_592, method: 'zeroout',
  bytesWiped: 8_589_934_592, durationSeconds: 41, verification: { samples: 18, bytesRead: 2_162_688, nonZeroSamples: 0 },
  status: 'ok', message: null, ...over,
});

const input = (over: Partial<EraseRecordInput> = {}): EraseRecordInput => ({
  agentId: 'rack-a1',
  host: {
    name: 'worker-7', namespace: 'default', uid: 'uid-7', bootMACAddress: '52:54:00:ab:cd:ef',
    system: { manufacturer: 'QEMU', productName: 'Standard PC', serialNumber: 'SN-42' }, provisioningState: 'deprovisioning',
  },
  commandId: 'cmd-1',
  softwareRaidKept: true,
  startedAt: new Date('2026-12-05T08:00:00Z'),
  finishedAt: new Date('2026-12-05T08:03:20Z'),
  status: 'ok',
  message: null,
  details: { mode: 'erase', disks: [disk('/dev/sda'), disk('/dev/sdb')] },
  ...over,
});

/** A signer with a fixed seed (ed25519 signatures are deterministic). */
function testSigner(): ConstructorParameters<typeof EraseRecordBook>[1] {
  const key = ed25519SigningKeyFromOpenSsh(generateEd25519Key('rackside-erase-records@rack-a1', Buffer.alloc(32, 7)).privateKey);
  return { sign: (doc) => signSshsig(doc, ERASE_RECORD_NAMESPACE, key), publicKey: key.publicKeyLine, fingerprint: key.fingerprint };
}

test('an erase record: stable id per host and command, every field carried, exact text', () => {
  const record = buildEraseRecord(input());
  assert.match(record.id, ERASE_RECORD_ID);
  assert.equal(record.id, eraseRecordId('uid-7', 'cmd-1'));
  assert.notEqual(eraseRecordId('uid-7', 'cmd-2'), record.id, 'another command is another record');
  assert.notEqual(eraseRecordId('uid-8', 'cmd-1'), record.id, 'another host is another record');
  assert.equal(record.kind, 'EraseRecord');
  assert.equal(record.mode, 'erase');
  assert.equal(record.startedAt, '2026-12-05T08:00:00.000Z');
  assert.deepEqual(record.disks[0], {
    device: '/dev/sda', serial: 'S-/dev/sda', wwn: '0x5000c5001234abcd', model: 'QEMU HARDDISK', sizeBytes: 8_589_934_592, method: 'zeroout',
    bytesWiped: 8_589_934_592, durationSeconds: 41, verification: { samples: 18, bytesRead: 2_162_688, nonZeroSamples: 0 }, status: 'ok', message: null,
  });
  const text = encodeEraseRecord(record);
  assert.ok(text.endsWith('}\n'));
  assert.deepEqual(JSON.parse(text), record);
});

test('the outcome line names wiped, kept and failed disks', () => {
  const ok = buildEraseRecord(input());
  assert.equal(eraseRecordOutcome(ok), '2 disks wiped (erase)');
  const kept = buildEraseRecord(input({ details: { mode: 'metadata', disks: [disk('/dev/sda', { method: 'kept', verification: null }), disk('/dev/md0', { method: 'metadata' })] } }));
  assert.equal(eraseRecordOutcome(kept), '1 disk wiped (metadata), 1 RAID member kept');
  const failed = buildEraseRecord(input({ status: 'error', details: { mode: 'erase', disks: [disk('/dev/sda'), disk('/dev/sdb', { status: 'error', message: 'verification found data in 3 of 18 samples' })] } }));
  assert.equal(eraseRecordOutcome(failed), '1 of 2 disks failed');
  assert.equal(eraseRecordOutcome(buildEraseRecord(input({ status: 'error', details: { mode: 'erase', disks: [] } }))), 'failed');
});

test('the book signs each record once, verifiably, and lists newest first, by host', async () => {
  const store = createMemoryStore();
  const book = new EraseRecordBook(store.eraseRecords, testSigner());
  const older = buildEraseRecord(input({ commandId: 'cmd-0', finishedAt: new Date('2026-12-01T00:00:00Z') }));
  const newer = buildEraseRecord(input());
  const other = buildEraseRecord(input({ host: { ...input().host, name: 'worker-8', uid: 'uid-8' } }));
  assert.equal(await book.add(older), 'added');
  assert.equal(await book.add(newer), 'added');
  assert.equal(await book.add(other), 'added');
  assert.equal(await book.add({ ...newer, message: 'changed' }), 'exists', 'first write wins: the signed text was handed out');

  const signed = await book.get(newer.id);
  assert.ok(signed !== undefined);
  assert.equal(signed.document, encodeEraseRecord(newer));
  const verified = verifySshsig(Buffer.from(signed.document), signed.signature, ERASE_RECORD_NAMESPACE);
  assert.ok(verified.ok, JSON.stringify(verified));
  assert.equal(verified.fingerprint, book.signingKey.fingerprint);
  const tampered = verifySshsig(Buffer.from(signed.document.replace('"ok"', '"OK"')), signed.signature, ERASE_RECORD_NAMESPACE);
  assert.equal(tampered.ok, false, 'an edited record does not verify');
  assert.equal(verifySshsig(Buffer.from(signed.document), signed.signature, 'file').ok, false, 'nor as another namespace');

  // newest first; the two finished at the same time by id
  assert.deepEqual((await book.list()).map((r) => r.id), [...[newer.id, other.id].sort(), older.id]);
  assert.deepEqual((await book.list({ host: 'worker-7' })).map((r) => r.id), [newer.id, older.id]);
  assert.deepEqual(await book.list({ host: 'nobody' }), []);
  assert.equal(await book.get('../../etc'), undefined, 'not a record id');
  assert.equal(await book.get('er-0000000000000000'), undefined);
});

test('the signing key is made on first open (0600, .pub beside it) and reused', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-erase-key-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = createMemoryStore();
  const first = await openEraseRecordBook(store.eraseRecords, dir, 'rack-a1');
  const again = await openEraseRecordBook(store.eraseRecords, dir, 'rack-a1');
  assert.equal(again.signingKey.fingerprint, first.signingKey.fingerprint);
  assert.equal((await stat(join(dir, ERASE_SIGNING_KEY_FILE))).mode & 0o777, 0o600);
  const pub = await readFile(join(dir, `${ERASE_SIGNING_KEY_FILE}.pub`), 'utf8');
  assert.equal(pub.split(' ').slice(0, 2).join(' '), first.signingKey.publicKey.split(' ').slice(0, 2).join(' '));
  assert.match(pub, /rackside-erase-records@rack-a1/);

  // What `rackside doctor` reads of it: the same fingerprint; readable by others, a failure.
  const probed = await probeEraseKey(dir);
  assert.equal(probed.fingerprint, first.signingKey.fingerprint);
  assert.equal(checkEraseKey(probed).status, 'ok');
  await chmod(join(dir, ERASE_SIGNING_KEY_FILE), 0o644);
  assert.equal(checkEraseKey(await probeEraseKey(dir)).status, 'fail');
  await assert.rejects(openEraseRecordBook(store.eraseRecords, dir, 'rack-a1'), /accessible by others/, 'and the agent refuses it, as the doctor says');
  assert.equal((await probeEraseKey(join(dir, 'nowhere'))).exists, false);
});

test('the ramdisk API records a clean before acknowledging it: a failed write is a 500 and the retry records it once', async (t) => {
  const store = createMemoryStore();
  const nodes = new NodeTable(store.nodes, store.inventories);
  const nowMs = 5_000_000;
  await store.nodes.put('uid-7', {
    boot: 'ramdisk', token: 'tok-erase-abcdefghijklmnopqrstuv', tokenExpiresAtMs: nowMs + RAMDISK_TOKEN_GRACE_MS,
    local: {
      provID: 'p7', name: 'worker-7', bootMACAddress: '52:54:00:ab:cd:ef', state: 'cleaning',
      op: { kind: 'clean', commandId: 'clean-1', startedAtMs: nowMs - 200_000, deadlineMs: nowMs + 1000, phase: 'sent', clean: { mode: 'erase', keepSoftwareRaid: true } },
    },
  });
  const book = new EraseRecordBook(store.eraseRecords, testSigner());
  const recorder = createEraseRecorder({ book, getHost: () => Promise.resolve(undefined), agentId: 'rack-a1', wallNowMs: () => Date.parse('2026-12-05T09:00:00Z'), steadyNowMs: () => nowMs });
  let failNext = true;
  const app = express();
  app.use(createRamdiskRouter({
    store, nodes, nowMs: () => nowMs,
    recordClean: async (cleanInput) => {
      if (failNext) {
        failNext = false;
        throw new Error('disk full');
      }
      return recorder(cleanInput);
    },
  }));
  app.use((_err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).end();
  });
  const url = `${await listenOnLoopback(t, app)}/ramdisk/v1/result`;
  const post = (): Promise<Response> => fetch(url, {
    method: 'POST',
    headers: { authorization: 'Bearer tok-erase-abcdefghijklmnopqrstuv', 'content-type': 'application/json' },
    body: JSON.stringify({
      command_id: 'clean-1', command: 'clean', status: 'ok', message: null, log: ['clean: done'],
      details: { mode: 'erase', disks: [{ name: '/dev/sda', serial: 'S1', wwn: null, model: 'M', size: 1048576000, method: 'zeroout', bytes_wiped: 1048576000, duration_seconds: 7, verification: { samples: 18, bytes_read: 2162688, nonzero_samples: 0 }, status: 'ok', message: null }] },
    }),
  });

  assert.equal((await post()).status, 500, 'the record could not be written: not acknowledged');
  assert.equal((await nodes.get('uid-7')).local?.op?.phase, 'sent', 'the clean is still current');
  assert.deepEqual(await book.list(), []);
  assert.equal((await post()).status, 200, 'the retry is acknowledged');
  assert.equal((await nodes.get('uid-7')).local?.op?.phase, 'done');
  const listed = await book.list();
  assert.equal(listed.length, 1);
  const record = listed[0];
  assert.ok(record !== undefined);
  assert.equal(record.host.name, 'worker-7');
  assert.equal(record.host.namespace, 'default', 'a host gone from the store is still named');
  assert.equal(record.mode, 'erase');
  assert.equal(record.softwareRaidKept, true);
  assert.equal(record.startedAt, '2026-12-05T08:56:40.000Z', 'started 200 s (steady) before the result, on the wall clock');
  assert.deepEqual(record.disks.map((d) => [d.device, d.method, d.verification?.nonZeroSamples]), [['/dev/sda', 'zeroout', 0]]);
  assert.equal((await post()).status, 200, 'a late duplicate is acknowledged as stale');
  assert.equal((await book.list()).length, 1, 'and records nothing');
  const events = (await store.listEvents()).filter((e) => e.reason === 'EraseRecorded');
  assert.equal(events.length, 1);
  assert.match(events[0]?.message ?? '', new RegExp(`erase record ${record.id}: 1 disk wiped \\(erase\\)`));
});
