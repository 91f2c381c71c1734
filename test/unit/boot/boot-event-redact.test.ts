/**
 * @module Boot HTTP events never carry a config drive's unguessable name (found by
 * test/integration/secret-scan.test.ts: `GET /configdrive/<uid>-<random>.img` was in the
 * HTTPRequest event's message and data, hence in `rackside get events`, the timelines and the
 * controller's summaries — while the deploy runs, that name fetches the host's user data).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONFIG_DRIVE_PREFIX, formatBootEvent, redactBootPath } from '../../../agent/boot/boot-event-format.js';
import { CONFIG_DRIVE_MOUNT } from '../../../agent/provisioner/local/image-prep.js';

const UID = '622bbecc-f813-456b-b267-60259cf317fe';
const RANDOM = '915d97aee5fd1929abee16fc';

test('the prefix is the config drive mount of the local provisioner', () => {
  assert.equal(CONFIG_DRIVE_PREFIX, `/${CONFIG_DRIVE_MOUNT}/`);
});

const paths: Record<string, [string, string]> = {
  'a config drive keeps its uid': [`/configdrive/${UID}-${RANDOM}.img`, `/configdrive/${UID}-[redacted]`],
  'an odd name under the mount': [`/configdrive/${RANDOM}`, '/configdrive/[redacted]'],
  'other paths are unchanged': ['/images/abc', '/images/abc'],
  'the boot script is unchanged': ['/boot/52-54-00-00-31-01.ipxe', '/boot/52-54-00-00-31-01.ipxe'],
};
for (const [name, [path, shown]] of Object.entries(paths)) {
  test(`redactBootPath: ${name}`, () => {
    assert.equal(redactBootPath(path), shown);
  });
}

test('an HTTPRequest event for a config drive has neither the name in its message nor in its data', () => {
  const event = formatBootEvent({ kind: 'http', atMs: 0, method: 'GET', path: `/configdrive/${UID}-${RANDOM}.img`, status: 200, bytes: 378880, durationMs: 1, completed: true, clientAddress: '10.0.0.5' });
  assert.ok(!JSON.stringify(event).includes(RANDOM), JSON.stringify(event));
  assert.equal(event.data.path, `/configdrive/${UID}-[redacted]`);
  assert.match(event.message, /^GET \/configdrive\/622bbecc-f813-456b-b267-60259cf317fe-\[redacted\] → 200/);
});
