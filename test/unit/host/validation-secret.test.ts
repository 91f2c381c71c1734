import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeManifest, decodeSecret } from '../../../agent/host/validation.js';
import { ValidationError } from '../../../agent/errors.js';
import { DEV_ENV_MANIFEST, parseManifests } from './validation-manifests.js';

type Json = Record<string, unknown>;

function baseSecret(): Json {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'node-0-bmc-secret', namespace: 'metal3' }, type: 'Opaque', data: { username: 'YWRtaW4=', password: 'cGFzc3dvcmQ=' } };
}

test('a metal3-dev-env BMC secret decodes with its data kept as base64', () => {
  const [doc] = parseManifests(DEV_ENV_MANIFEST);
  assert.deepEqual(decodeSecret(doc), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'node-0-bmc-secret', namespace: 'metal3', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
    type: 'Opaque',
    data: { username: 'YWRtaW4=', password: 'cGFzc3dvcmQ=' },
  });
});

test('stringData is base64-encoded and merged over data, as the apiserver does', () => {
  const s = baseSecret();
  s.stringData = { password: 'n3w-pässword', userData: '#cloud-config\n' };
  delete s.type;
  const secret = decodeSecret(s);
  assert.equal(secret.type, 'Opaque');
  assert.equal(secret.data.username, 'YWRtaW4=');
  assert.equal(Buffer.from(secret.data.password ?? '', 'base64').toString('utf8'), 'n3w-pässword');
  assert.equal(Buffer.from(secret.data.userData ?? '', 'base64').toString('utf8'), '#cloud-config\n');
});

test('server-owned metadata is accepted and dropped; empty data is fine', () => {
  const secret = decodeSecret({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'empty', uid: 'abc', resourceVersion: '7', creationTimestamp: '2024-01-01T00:00:00Z' } });
  assert.deepEqual(secret.data, {});
  assert.deepEqual([secret.metadata.uid, secret.metadata.namespace], ['', 'default']);
});

const invalid: Record<string, { mutate: (s: Json) => void; field: string; message?: RegExp }> = {
  'wrong apiVersion': { mutate: (s) => { s.apiVersion = 'metal3.io/v1alpha1'; }, field: 'apiVersion', message: /must be "v1"/ },
  'missing metadata': { mutate: (s) => { delete s.metadata; }, field: 'metadata' },
  'bad name': { mutate: (s) => { (s.metadata as Json).name = 'Node0_BMC'; }, field: 'metadata.name' },
  'data value not base64': { mutate: (s) => { s.data = { password: 'hunter2!' }; }, field: 'data["password"]', message: /base64.*stringData/ },
  'data value not a string': { mutate: (s) => { s.data = { password: 42 }; }, field: 'data["password"]', message: /must be a string/ },
  'bad data key': { mutate: (s) => { s.data = { 'user name': 'YWRtaW4=' }; }, field: 'data["user name"]', message: /invalid key/ },
  'bad stringData key': { mutate: (s) => { s.stringData = { 'a/b': 'x' }; }, field: 'stringData["a/b"]' },
  'type not a string': { mutate: (s) => { s.type = 1; }, field: 'type' },
  'immutable is not supported': { mutate: (s) => { s.immutable = true; }, field: 'immutable', message: /unknown field/ },
};

for (const [name, c] of Object.entries(invalid)) {
  test(`decodeSecret rejects: ${name}`, () => {
    const s = baseSecret();
    c.mutate(s);
    assert.throws(() => decodeSecret(s, 'items[1].'), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.equal(err.field, `items[1].${c.field}`);
      if (c.message !== undefined) assert.match(err.message, c.message);
      return true;
    });
  });
}

test('decodeManifest returns secrets under kind Secret', () => {
  const m = decodeManifest(baseSecret());
  if (m.kind !== 'Secret') assert.fail(`expected a Secret, got ${m.kind}`);
  assert.equal(m.secret.metadata.name, 'node-0-bmc-secret');
});
