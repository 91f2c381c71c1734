/**
 * The boot-MAC index of a host snapshot (agent/store/host-mac-index.ts): one index per snapshot,
 * shared by every reader until the next host commit makes a new snapshot; MACs normalized; the
 * later host wins a MAC two hosts name; hosts without a boot MAC are left out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostMacIndex, normalizeBootMac } from '../../../agent/store/host-mac-index.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import type { BareMetalHost } from '../../../agent/host/types.js';

const host = (name: string, mac?: string): BareMetalHost => ({
  apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { online: false, ...(mac === undefined ? {} : { bootMACAddress: mac }) },
} as unknown as BareMetalHost);

test('normalizeBootMac: trimmed, lower case, colons', () => {
  assert.equal(normalizeBootMac(' 52-54-00-AB-CD-EF '), '52:54:00:ab:cd:ef');
});

test('one index per snapshot, shared until a host commit; later host wins a shared MAC; no MAC, no entry', async () => {
  const store = createMemoryStore();
  await store.commit(['a', 'b', 'c', 'd'].map((name, i) => ({ kind: 'host' as const, op: 'put' as const, object: host(name, [ '52-54-00-00-00-01', '52:54:00:00:00:02', '52:54:00:00:00:02', undefined][i]) })));
  const first = await store.hostSnapshot();
  const index = hostMacIndex(first);
  assert.equal(hostMacIndex(await store.hostSnapshot()), index, 'the same snapshot, the same index');
  assert.equal(index.byMac.get('52:54:00:00:00:01')?.metadata.name, 'a');
  assert.equal(index.byMac.get('52:54:00:00:00:02')?.metadata.name, 'c');
  assert.deepEqual([...index.macByName], [['a', '52:54:00:00:00:01'], ['c', '52:54:00:00:00:02']]);
  await store.commit([{ kind: 'host', op: 'put', object: host('e', '52:54:00:00:00:05') }]);
  const next = hostMacIndex(await store.hostSnapshot());
  assert.notEqual(next, index, 'a commit makes a new snapshot and so a new index');
  assert.equal(next.byMac.get('52:54:00:00:00:05')?.metadata.name, 'e');
});
