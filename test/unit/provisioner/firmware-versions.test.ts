/**
 * HostFirmwareComponents versions as Ironic keeps them: the first version seen stays initial,
 * a changed version becomes current and last flashed with the time it was seen, unchanged
 * readings write nothing, and records written by any version decode safely.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeFirmwareVersionsSeen, trackFirmwareVersions } from '../../../agent/provisioner/local/firmware-versions.js';
import { decodeNodeEntry } from '../../../agent/provisioner/local/node.js';

const T1 = '2026-12-01T03:00:00.000Z';
const T2 = '2026-12-01T04:00:00.000Z';

test('first reading: initial = current, nothing flashed; the record is new', () => {
  const r = trackFirmwareVersions(undefined, [{ component: 'bios', version: '1.0' }, { component: 'bmc', version: '5.1' }], T1);
  assert.equal(r.changed, true);
  assert.deepEqual(r.components, [{ component: 'bios', initialVersion: '1.0', currentVersion: '1.0' }, { component: 'bmc', initialVersion: '5.1', currentVersion: '5.1' }]);
});

test('a flashed component keeps its initial version and reports the new one as last flashed, stamped once', () => {
  const first = trackFirmwareVersions(undefined, [{ component: 'bios', version: '1.0' }, { component: 'bmc', version: '5.1' }], T1);
  const same = trackFirmwareVersions(first.seen, [{ component: 'bios', version: '1.0' }, { component: 'bmc', version: '5.1' }], T2);
  assert.equal(same.changed, false, 'an unchanged reading writes nothing');
  const flashed = trackFirmwareVersions(first.seen, [{ component: 'bios', version: '1.2' }, { component: 'bmc', version: '5.1' }], T1);
  assert.equal(flashed.changed, true);
  assert.deepEqual(flashed.components[0], { component: 'bios', initialVersion: '1.0', currentVersion: '1.2', lastVersionFlashed: '1.2', updatedAt: T1 });
  assert.deepEqual(flashed.components[1], { component: 'bmc', initialVersion: '5.1', currentVersion: '5.1' });
  const later = trackFirmwareVersions(flashed.seen, [{ component: 'bios', version: '1.2' }], T2);
  assert.equal(later.changed, false);
  assert.equal(later.components[0]?.updatedAt, T1, 'the time of the flash, not of the last reading');
  assert.ok(later.seen.bmc !== undefined, 'a component missing from one answer is kept');
});

test('decoding: mistyped entries are dropped; the node record keeps a valid one', () => {
  assert.equal(decodeFirmwareVersionsSeen('x'), undefined);
  assert.deepEqual(decodeFirmwareVersionsSeen({ bios: { initialVersion: '1', currentVersion: '2', lastVersionFlashed: '2', updatedAt: T1 }, bad: { initialVersion: 3 }, worse: null }), {
    bios: { initialVersion: '1', currentVersion: '2', lastVersionFlashed: '2', updatedAt: T1 },
  });
  const entry = decodeNodeEntry({ local: { provID: 'p', state: 'available', firmware: { bmc: { initialVersion: '5.1', currentVersion: '5.1' } } } });
  assert.deepEqual(entry.local?.firmware, { bmc: { initialVersion: '5.1', currentVersion: '5.1' } });
});
