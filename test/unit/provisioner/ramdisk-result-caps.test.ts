/**
 * Ramdisk results have size caps of their own: the message (4 KiB) and details (64 KiB) kept
 * with the operation and in the event log are cut with a marker and counted; small results are
 * stored exactly as sent; cut details keep their shape so the provisioner still reads them.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { ramdiskRig, type RamdiskRig } from './ramdisk-rig.js';
import { capDetails, capText, RESULT_DETAILS_MAX_BYTES, RESULT_MESSAGE_MAX_BYTES } from '../../../agent/provisioner/local/result-caps.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

const textCases: Record<string, { text: string; max: number; whole: boolean }> = {
  'short text is kept whole': { text: 'disk /dev/sda failed', max: 64, whole: true },
  'exactly the cap is kept whole': { text: 'x'.repeat(64), max: 64, whole: true },
  'ASCII over the cap is cut': { text: 'y'.repeat(10_000), max: 100, whole: false },
  'multi-byte characters are cut on a boundary': { text: 'é€😀'.repeat(5000), max: 4096, whole: false },
  'a cap smaller than the marker still returns the marker only': { text: 'z'.repeat(100), max: 4, whole: false },
};
for (const [name, c] of Object.entries(textCases)) {
  test(`capText: ${name}`, () => {
    const out = capText(c.text, c.max);
    if (c.whole) {
      assert.equal(out.text, c.text);
      assert.equal(out.cutBytes, 0);
      return;
    }
    assert.match(out.text, new RegExp(` … \\[cut: kept \\d+ of ${bytes(c.text)} bytes\\]$`));
    assert.ok(c.max < 40 || bytes(out.text) <= c.max, `${bytes(out.text)} bytes ≤ ${c.max}`);
    assert.ok(!out.text.includes('\uFFFD'), 'no broken character');
    const kept = Number(/kept (\d+) of/.exec(out.text)?.[1]);
    assert.equal(out.cutBytes, bytes(c.text) - kept);
    assert.ok(c.text.startsWith(out.text.slice(0, out.text.lastIndexOf(' … [cut'))), 'a prefix of the original');
  });
}

const disk = (i: number, message: string | null): Record<string, unknown> => ({
  name: `/dev/sd${i}`, serial: `S${i}`, sizeBytes: 1e12, method: 'metadata', bytesWiped: 2097152, durationSeconds: 1, status: message === null ? 'ok' : 'error', message,
});

test('capDetails: details under the cap are the same object; null stays null', () => {
  const small = { mode: 'metadata', disks: [disk(1, null)] };
  assert.equal(capDetails(small, RESULT_DETAILS_MAX_BYTES).details, small);
  assert.equal(capDetails(small, RESULT_DETAILS_MAX_BYTES).cut, false);
  assert.equal(capDetails(null, 10).details, null);
});

/** Details over the cap, and whether strings (marked `…[cut]`) or only array lengths must shrink. */
const detailCases: Record<string, { details: Record<string, unknown>; strings: boolean }> = {
  'one huge string': { details: { mode: 'erase', disks: [disk(1, 'E'.repeat(1_000_000))] }, strings: true },
  'thousands of disks': { details: { mode: 'erase', disks: Array.from({ length: 20_000 }, (_, i) => disk(i, `error ${i}`)) }, strings: false },
  'deploy details with huge fields': {
    details: {
      rootDevice: { name: '/dev/vda', sizeBytes: 1, model: 'M'.repeat(200_000), serial: 'S'.repeat(200_000) },
      image: { url: 'u'.repeat(300_000), bytes: 1, checksumType: 'sha256', checksum: 'c', attempts: 1 }, configDrive: null, durationSeconds: 1,
    },
    strings: true,
  },
};
for (const [name, { details, strings }] of Object.entries(detailCases)) {
  test(`capDetails: ${name} fit the cap and keep their shape`, () => {
    const out = capDetails(details, RESULT_DETAILS_MAX_BYTES);
    assert.equal(out.cut, true);
    assert.equal(out.bytes, bytes(JSON.stringify(details)));
    assert.ok(bytes(JSON.stringify(out.details)) <= RESULT_DETAILS_MAX_BYTES, `${bytes(JSON.stringify(out.details))} bytes`);
    assert.deepEqual(Object.keys(out.details), Object.keys(details), 'every field is still there');
    const disks = out.details.disks;
    if (Array.isArray(disks) && Array.isArray(details.disks)) {
      assert.ok(disks.length >= 1, 'at least the first disk is kept');
      assert.deepEqual(Object.keys(disks[0] as object), Object.keys(disk(0, null)));
      assert.deepEqual(disks[0], strings ? disks[0] : details.disks[0], 'kept entries are the first ones, whole');
      if (!strings) assert.ok(disks.length < details.disks.length);
    }
    if (strings) assert.match(JSON.stringify(out.details), /…\[cut\]/);
  });
}

/** The shared rig, posting results only. */
async function rig(t: TestContext, kind: 'clean' | 'deploy'): Promise<Omit<RamdiskRig, 'post'> & { post(body: unknown): Promise<number> }> {
  const r = await ramdiskRig(t, kind);
  return { ...r, post: async (body) => (await r.post('result', body)).status };
}

test('a failed clean with a 1 MiB message and 1 MiB of disk reports: the operation and the event keep at most 4 KiB and 64 KiB, marked and counted', async (t) => {
  const r = await rig(t, 'clean');
  const message = 'M'.repeat(1024 * 1024);
  const wireDisk = (i: number): Record<string, unknown> => ({
    name: `/dev/sd${i}`, serial: `S${i}`, size: 1e12, method: 'zeroout', bytes_wiped: 0, duration_seconds: 1, status: 'error', message: `${'bad sector '.repeat(25)}${i}`,
  });
  const details = { mode: 'erase', disks: Array.from({ length: 4000 }, (_, i) => wireDisk(i)) };
  assert.ok(bytes(JSON.stringify(details)) > 1024 * 1024);
  assert.equal(await r.post({ command_id: 'cmd-1', command: 'clean', status: 'error', message, details, log: ['x'.repeat(100_000), 'last line'] }), 200);
  assert.equal(r.stats.resultsTruncated, 1, 'counted');
  const op = (await r.nodes.get('uid-1')).local?.op;
  assert.equal(op?.phase, 'failed');
  assert.ok(bytes(op.message ?? '') <= RESULT_MESSAGE_MAX_BYTES);
  assert.match(op.message ?? '', / … \[cut: kept \d+ of 1048576 bytes\]$/);
  assert.ok(bytes(JSON.stringify(op.details)) <= RESULT_DETAILS_MAX_BYTES);
  const [event] = (await r.store.listEvents()).filter((e) => e.reason === 'CleanFailed');
  assert.ok(event !== undefined);
  assert.ok(bytes(event.message) <= RESULT_MESSAGE_MAX_BYTES, `event message ${bytes(event.message)} bytes`);
  assert.match(event.message, /^clean failed in the ramdisk: M+/);
  assert.match(event.message, /\[cut: kept \d+ of \d+ bytes\]$/);
  assert.ok(bytes(JSON.stringify(event.data?.details)) <= RESULT_DETAILS_MAX_BYTES);
  const truncated = event.data?.truncated as { messageBytesCut: number; detailsBytes: number; eventMessageBytesCut: number } | undefined;
  assert.ok(truncated !== undefined, 'the event says what was cut');
  assert.equal(truncated.messageBytesCut, 1024 * 1024 - Number(/kept (\d+) of/.exec(op.message ?? '')?.[1]));
  assert.ok(truncated.detailsBytes > 1024 * 1024, 'the size the details had (decoded)');
  assert.ok(truncated.eventMessageBytesCut > 0);
  assert.ok(bytes(JSON.stringify(event)) < RESULT_MESSAGE_MAX_BYTES + RESULT_DETAILS_MAX_BYTES + 64 * 1024, 'the whole event stays small');
});

test('an ordinary deploy result is stored exactly as sent and not counted', async (t) => {
  const r = await rig(t, 'deploy');
  const details = {
    root_device: { name: '/dev/vda', size: 10737418240, rotational: false, serial: 'D0' },
    image: { url: 'http://192.0.2.1/images/x', bytes: 196608, checksum_type: 'sha256', checksum: 'ab'.repeat(32), attempts: 1 },
    config_drive: null, duration_seconds: 2,
  };
  assert.equal(await r.post({ command_id: 'cmd-1', command: 'deploy', status: 'ok', message: 'written', details, log: ['deploy: done'] }), 200);
  assert.equal(r.stats.resultsTruncated, 0);
  const op = (await r.nodes.get('uid-1')).local?.op;
  assert.equal(op?.phase, 'done');
  assert.deepEqual(op.details, { rootDevice: { name: '/dev/vda', sizeBytes: 10737418240, rotational: false, model: null, vendor: null, serial: 'D0', wwn: null, wwnWithExtension: null, wwnVendorExtension: null, hctl: null, byPath: null }, image: { url: 'http://192.0.2.1/images/x', bytes: 196608, checksumType: 'sha256', checksum: 'ab'.repeat(32), attempts: 1 }, configDrive: null, durationSeconds: 2 });
  const [event] = (await r.store.listEvents()).filter((e) => e.reason === 'DeployDone');
  assert.equal(event?.data?.truncated, undefined);
  assert.match(event?.message ?? '', /^image written to \/dev\/vda: 196608 bytes/);
});
