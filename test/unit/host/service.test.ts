/** HostService: apply semantics (create/configure/unchanged, atomic multi-document), immutability, versions, actions. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostManifests, newHarness, TEST_IMAGE } from '../../helpers/host-harness.js';
import { ApiErrorCode } from '../../../agent/errors.js';

function rejectsWith(code: string, field: RegExp) {
  return (error: unknown): boolean => {
    const e = error as { code?: string; field?: string; status?: number };
    assert.equal(e.code, code);
    assert.match(e.field ?? '', field);
    return true;
  };
}

test('apply creates, then reports unchanged, then configured with a new generation', async () => {
  const { service } = newHarness();
  const first = await service.apply(hostManifests('a-0'));
  assert.deepEqual(first.map((o) => [o.kind, o.action]), [['Secret', 'created'], ['BareMetalHost', 'created']]);
  assert.equal(first[0]?.resourceVersion, first[1]?.resourceVersion, 'one atomic commit');
  const again = await service.apply(hostManifests('a-0'));
  assert.deepEqual(again.map((o) => o.action), ['unchanged', 'unchanged']);
  const changed = await service.apply(hostManifests('a-0', { image: TEST_IMAGE }));
  assert.deepEqual(changed.map((o) => o.action), ['unchanged', 'configured']);
  const host = await service.getHost('a-0');
  assert.equal(host.metadata.generation, 2);
  assert.deepEqual(host.metadata.finalizers, ['baremetalhost.metal3.io']);
});

test('one invalid document writes nothing and names its item path', async () => {
  const { service, store } = newHarness();
  const docs = hostManifests('b-0');
  const bad = { apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name: 'b-1' }, spec: { online: true, bootMACAddress: 'nope' } };
  await assert.rejects(service.apply([...docs, bad]), rejectsWith(ApiErrorCode.invalid, /^items\[2\]\.spec\.bootMACAddress$/));
  assert.equal((await store.listHosts()).length, 0);
  assert.equal((await store.listSecrets()).length, 0);
});

test('a stale resourceVersion is a 409 naming metadata.resourceVersion', async () => {
  const { service } = newHarness();
  await service.apply(hostManifests('c-0'));
  const host = await service.getHost('c-0');
  await service.hostAction('c-0', { action: 'power-off' });
  const [, manifest] = hostManifests('c-0') as [unknown, { metadata: Record<string, unknown> }];
  manifest.metadata.resourceVersion = host.metadata.resourceVersion;
  await assert.rejects(service.apply([manifest]), rejectsWith(ApiErrorCode.conflict, /^metadata\.resourceVersion$/));
});

test('bootMACAddress is immutable once set (409 naming the field)', async () => {
  const { service } = newHarness();
  await service.apply(hostManifests('d-0'));
  await assert.rejects(
    service.apply([hostManifests('d-0', { bootMACAddress: '00:5c:52:31:3a:9d' })[1]]),
    rejectsWith(ApiErrorCode.conflict, /spec\.bootMACAddress/),
  );
  // Same MAC in another case is not a change.
  await service.apply([hostManifests('d-0', { bootMACAddress: '00:5C:52:31:3A:9C' })[1]]);
});

test('a host being deleted refuses updates and actions', async () => {
  const { service } = newHarness();
  await service.apply(hostManifests('e-0'));
  const deleting = await service.deleteHost('e-0');
  assert.notEqual(deleting.metadata.deletionTimestamp, undefined);
  await assert.rejects(service.apply(hostManifests('e-0', { image: TEST_IMAGE })), rejectsWith(ApiErrorCode.conflict, /deletionTimestamp/));
  await assert.rejects(service.hostAction('e-0', { action: 'inspect' }), rejectsWith(ApiErrorCode.conflict, /deletionTimestamp/));
});

test('actions map onto upstream fields and annotations', async () => {
  const { service } = newHarness();
  await service.apply(hostManifests('f-0'));
  let host = await service.hostAction('f-0', { action: 'reboot', mode: 'hard' });
  assert.equal(host.metadata.annotations?.['reboot.metal3.io'], '{"mode":"hard"}');
  host = await service.hostAction('f-0', { action: 'inspect' });
  assert.equal(host.metadata.annotations?.['inspect.metal3.io'], '');
  host = await service.hostAction('f-0', { action: 'detach', deleteAction: 'delay' });
  assert.equal(host.metadata.annotations?.['baremetalhost.metal3.io/detached'], '{"deleteAction":"delay"}');
  host = await service.hostAction('f-0', { action: 'attach' });
  assert.equal(host.metadata.annotations?.['baremetalhost.metal3.io/detached'], undefined);
  const generation = host.metadata.generation;
  host = await service.hostAction('f-0', { action: 'power-off' });
  assert.equal(host.spec.online, false);
  assert.equal(host.metadata.generation, generation + 1);
  await assert.rejects(service.getHost('nope'), rejectsWith(ApiErrorCode.notFound, /metadata\.name/));
});

test('secrets are listed without values', async () => {
  const { service } = newHarness();
  await service.apply(hostManifests('g-0'));
  const secrets = await service.listSecrets();
  assert.deepEqual(secrets.map((s) => [s.namespace, s.name, s.keys]), [['metal3', 'g-0-bmc-secret', ['password', 'username']]]);
  assert.doesNotMatch(JSON.stringify(secrets), /cGFzc3dvcmQ=|YWRtaW4=|"data"/);
});

test('concurrent applies and actions on the same host all succeed (no 409 between API writers) and the last label wins', async () => {
  const { service } = newHarness();
  await service.apply(hostManifests('race-0'));
  const labelled = (tick: number): unknown[] => {
    const docs = hostManifests('race-0') as [unknown, { metadata: Record<string, unknown> }];
    docs[1].metadata.labels = { tick: String(tick) };
    return docs;
  };
  const writes = Array.from({ length: 40 }, (_, i) => (i % 5 === 4 ? service.hostAction('race-0', { action: i % 10 === 4 ? 'power-off' : 'power-on' }) : service.apply(labelled(i))));
  const outcomes = await Promise.allSettled(writes);
  assert.deepEqual(outcomes.filter((o) => o.status === 'rejected'), []);
  const host = await service.getHost('race-0');
  assert.equal(host.metadata.labels?.tick, '38');
  assert.equal(host.spec.online, true);
});
