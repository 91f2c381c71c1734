/**
 * The erase record commands against the real management app and routes over a real book:
 * `get erase-records` (table, --host, one record's exact text), `describe erase-record`, and
 * `export erase-record` (three files whose signature verifies, the ssh-keygen command printed;
 * refused where files cannot be written, as over SSH).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { EraseRecordBook } from '../../../agent/erase/book.js';
import { buildEraseRecord, ERASE_RECORD_NAMESPACE, type EraseRecordInput } from '../../../agent/erase/record.js';
import { createEraseRecordRouter } from '../../../agent/erase/routes.js';
import { captureCliIo, type CapturedCliIo } from '../../helpers/cli-io.js';
import { runCli } from '../../../agent/cli/run.js';
import { ed25519SigningKeyFromOpenSsh, signSshsig, verifySshsig } from '../../../agent/ssh/index.js';
import { generateEd25519Key } from '../../../agent/ssh/host-key.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { FakeBackend, startFakeApi, type FakeApi } from '../../helpers/fake-backend.js';

const NOW = Date.parse('2026-12-05T09:00:00Z');
let api: FakeApi;
let book: EraseRecordBook;

const base = (name: string, uid: string, commandId: string, finished: string, mode: 'metadata' | 'erase'): EraseRecordInput => ({
  agentId: 'rack-a1',
  host: { name, namespace: 'default', uid, bootMACAddress: '52:54:00:ab:cd:ef', system: { manufacturer: 'QEMU', productName: 'Standard PC', serialNumber: `SN-${name}` }, provisioningState: 'deprovisioning' },
  commandId, softwareRaidKept: true, startedAt: new Date(Date.parse(finished) - 200_000), finishedAt: new Date(finished), status: 'ok', message: null,
  details: {
    mode,
    disks: [{
      name: '/dev/sda', serial: 'S1', wwn: '0x5000c5001234abcd', model: 'QEMU HARDDISK', sizeBytes: 480_103_981_056, method: mode === 'erase' ? 'zeroout' : 'metadata',
      bytesWiped: mode === 'erase' ? 480_103_981_056 : 2_097_152, durationSeconds: 200, verification: { samples: mode === 'erase' ? 18 : 2, bytesRead: 2_162_688, nonZeroSamples: 0 }, status: 'ok', message: null,
    }],
  },
});
const erased = buildEraseRecord(base('worker-7', 'uid-7', 'c2', '2026-12-05T08:57:00Z', 'erase'));
const older = buildEraseRecord(base('worker-8', 'uid-8', 'c1', '2026-11-28T09:00:00Z', 'metadata'));

before(async () => {
  const key = ed25519SigningKeyFromOpenSsh(generateEd25519Key('rackside-erase-records@rack-a1', Buffer.alloc(32, 3)).privateKey);
  book = new EraseRecordBook(createMemoryStore().eraseRecords, { sign: (d) => signSshsig(d, ERASE_RECORD_NAMESPACE, key), publicKey: key.publicKeyLine, fingerprint: key.fingerprint });
  await book.add(erased);
  await book.add(older);
  api = await startFakeApi(new FakeBackend(), { extraRoutes: (router) => { router.use(createEraseRecordRouter(book, 'rack-a1')); } });
});
after(() => api.close());

function harness(withFiles = true): CapturedCliIo & { files: Map<string, string> } {
  const files = new Map<string, string>();
  const writeFile = (path: string, text: string): Promise<void> => { files.set(path, text); return Promise.resolve(); };
  return { ...captureCliIo(api.baseUrl, NOW, withFiles ? { writeFile } : {}), files };
}

test('get erase-records: a table, newest first; --host narrows it', async () => {
  const h = harness();
  assert.equal(await runCli(['get', 'erase-records'], h.io), 0, h.err());
  const lines = h.out().trimEnd().split('\n');
  assert.match(lines[0] ?? '', /^ID\s+HOST\s+SERIAL\s+MODE\s+DISKS\s+RESULT\s+FINISHED$/);
  assert.match(lines[1] ?? '', new RegExp(`^${erased.id}\\s+worker-7\\s+SN-worker-7\\s+erase\\s+1\\s+1 disk wiped \\(erase\\)\\s+3m$`));
  assert.match(lines[2] ?? '', new RegExp(`^${older.id}\\s+worker-8 .*metadata.*7d$`));
  const one = harness();
  assert.equal(await runCli(['get', 'erase-records', '--host', 'worker-8'], one.io), 0);
  assert.equal(one.out().trimEnd().split('\n').length, 2);
  const none = harness();
  assert.equal(await runCli(['get', 'erase-records', '--host', 'nobody'], none.io), 0);
  assert.equal(none.err(), 'No resources found.\n');
});

test('get erase-record ID -o json prints the signed text byte for byte; an unknown id exits 3', async () => {
  const h = harness();
  assert.equal(await runCli(['get', 'erase-record', erased.id, '-o', 'json'], h.io), 0, h.err());
  assert.equal(h.out(), (await book.get(erased.id))?.document);
  const missing = harness();
  assert.equal(await runCli(['get', 'erase-record', 'er-0000000000000000'], missing.io), 3);
  assert.match(missing.err(), /EraseRecord "er-0000000000000000" not found/);
});

test('describe erase-record: host, system, disks with read-back, and the signer', async () => {
  const h = harness();
  assert.equal(await runCli(['describe', 'erase-record', erased.id], h.io), 0, h.err());
  const text = h.out();
  assert.match(text, /Host:\s+default\/worker-7 \(uid uid-7\)/);
  assert.match(text, /System:\s+QEMU, Standard PC, serial SN-worker-7/);
  assert.match(text, /Mode:\s+erase \(software RAID kept\)/);
  assert.match(text, /\/dev\/sda\s+S1\s+0x5000c5001234abcd\s+QEMU HARDDISK\s+480 GB\s+zeroout\s+480 GB\s+200\s+18 samples zero\s+ok/);
  assert.match(text, new RegExp(`Signed by:\\s+${book.signingKey.fingerprint.replaceAll('+', '\\+')}`));
});

test('export erase-record writes the record, its signature and allowed_signers, and prints the check', async () => {
  const h = harness();
  assert.equal(await runCli(['export', 'erase-record', erased.id, '--output', '/audit'], h.io), 0, h.err());
  const document = h.files.get(`/audit/${erased.id}.json`) ?? '';
  const signature = h.files.get(`/audit/${erased.id}.json.sig`) ?? '';
  const verified = verifySshsig(Buffer.from(document), signature, ERASE_RECORD_NAMESPACE);
  assert.ok(verified.ok, JSON.stringify(verified));
  assert.equal(verified.fingerprint, book.signingKey.fingerprint);
  assert.equal(h.files.get('/audit/allowed_signers'), `rack-a1 namespaces="rackside-erase-record" ${book.signingKey.publicKey.split(' ').slice(0, 2).join(' ')}\n`);
  assert.ok(h.out().includes(`ssh-keygen -Y verify -f /audit/allowed_signers -I rack-a1 -n rackside-erase-record -s /audit/${erased.id}.json.sig < /audit/${erased.id}.json`), h.out());

  const overSsh = harness(false);
  assert.equal(await runCli(['export', 'erase-record', erased.id], overSsh.io), 2);
  assert.match(overSsh.err(), /not done over SSH: use "rackside get erase-record er-[0-9a-f]{16} -o json"/);
  const usage = harness();
  assert.equal(await runCli(['export', 'host', 'x'], usage.io), 2);
  assert.match(usage.err(), /usage: rackside export erase-record ID \[--output DIR\]/);
});
