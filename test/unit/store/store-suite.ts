/**
 * @module The behavioural contract of {@link Store}, run against every implementation
 * (LevelDB and memory) so they cannot drift apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError, ValidationError } from '../../../agent/errors.js';
import { StoreError, type ChangeNotice, type Store, type StoredEvent } from '../../../agent/store/index.js';
import { countingUids, makeEvent, makeFirmwareSettings, makeHost, makeSecret, makeUpdatePolicy, steppingClock } from './fixtures.js';

/** Options every store factory must honour. */
export interface SuiteOptions {
  eventCap?: number;
  now?: () => Date;
  newUid?: () => string;
  onListenerError?: (err: unknown) => void;
}

/** Creates a fresh, empty store; `dispose` closes it (if still open) and removes its files. */
export type StoreFactory = (options: SuiteOptions) => Promise<{ store: Store; dispose: () => Promise<void> }>;

/** Registers the shared behavioural tests under `label`. */
export function runStoreSuite(label: string, factory: StoreFactory): void {
  async function withStore(options: SuiteOptions, fn: (store: Store) => Promise<void>): Promise<void> {
    const { store, dispose } = await factory({ now: steppingClock(), newUid: countingUids(), ...options });
    try {
      await fn(store);
    } finally {
      await dispose();
    }
  }
  const it = (name: string, fn: (store: Store) => Promise<void>, options: SuiteOptions = {}): void => {
    void test(`${label}: ${name}`, () => withStore(options, fn));
  };

  it('create assigns uid, creationTimestamp and the new revision as resourceVersion', async (store) => {
    const res = await store.commit([{ kind: 'host', op: 'put', object: makeHost('web-1'), ifVersion: 'absent' }]);
    assert.equal(res.revision, 1);
    const meta = res.hosts[0]!.metadata;
    assert.deepEqual([meta.uid, meta.creationTimestamp, meta.resourceVersion], ['uid-1', '2026-01-02T03:04:05Z', '1']);
    assert.deepEqual(await store.getHost('web-1'), res.hosts[0]);
    assert.deepEqual((await store.listHosts()).map((h) => h.metadata.name), ['web-1']);
    assert.equal(await store.getHost('nope'), undefined);
  });

  it('listHosts and listHostsJson follow every commit, and each listing is the caller\'s own copy', async (store) => {
    const names = (hosts: { metadata: { name: string } }[]): string[] => hosts.map((h) => h.metadata.name);
    await store.commit([{ kind: 'host', op: 'put', object: makeHost('a') }, { kind: 'host', op: 'put', object: makeHost('b') }]);
    const first = await store.listHosts();
    first[0]!.spec.description = 'changed by a caller';
    first.pop();
    const second = await store.listHosts();
    assert.deepEqual(names(second), ['a', 'b']);
    assert.equal(second[0]!.spec.description, '');
    assert.equal(await store.listHostsJson(), JSON.stringify(second));
    await store.commit([{ kind: 'host', op: 'put', object: makeHost('a', 'edited') }]);
    const third = await store.listHosts();
    assert.deepEqual([third[0]!.spec.description, third[0]!.metadata.resourceVersion], ['edited', '2']);
    assert.equal(await store.listHostsJson(), JSON.stringify(third));
    await store.commit([{ kind: 'host', op: 'delete', name: 'b' }]);
    assert.equal(await store.listHostsJson(), JSON.stringify(await store.listHosts()));
    assert.deepEqual(names(await store.listHosts()), ['a']);
    // A listing racing a commit may or may not include it; the next listing does.
    await Promise.all([store.listHosts(), store.commit([{ kind: 'host', op: 'put', object: makeHost('c') }])]);
    assert.deepEqual(names(await store.listHosts()), ['a', 'c']);
  });

  it('update with the current version keeps uid and creationTimestamp and bumps resourceVersion', async (store) => {
    const created = (await store.commit([{ kind: 'host', op: 'put', object: makeHost('a'), ifVersion: 'absent' }])).hosts[0]!;
    const edit = structuredClone(created);
    edit.spec.online = false;
    edit.metadata.uid = 'forged';
    edit.metadata.creationTimestamp = '1999-01-01T00:00:00Z';
    const updated = (await store.commit([{ kind: 'host', op: 'put', object: edit, ifVersion: created.metadata.resourceVersion }])).hosts[0]!;
    assert.equal(updated.metadata.uid, created.metadata.uid);
    assert.equal(updated.metadata.creationTimestamp, created.metadata.creationTimestamp);
    assert.equal(updated.metadata.resourceVersion, '2');
    assert.equal((await store.getHost('a'))?.spec.online, false);
  });

  it('a stale or absent-but-exists precondition throws ConflictError naming kind, name, expected and actual', async (store) => {
    await store.commit([{ kind: 'host', op: 'put', object: makeHost('a'), ifVersion: 'absent' }]);
    await store.commit([{ kind: 'host', op: 'put', object: makeHost('a') }]); // unconditional: now version 2
    await assert.rejects(
      store.commit([{ kind: 'host', op: 'put', object: makeHost('a'), ifVersion: '1' }]),
      (err: unknown) => {
        assert.ok(err instanceof ConflictError);
        assert.equal(err.status, 409);
        assert.equal(err.field, 'metadata.resourceVersion');
        assert.match(err.message, /host "a".*expected resourceVersion 1, actual resourceVersion 2/);
        return true;
      },
    );
    await assert.rejects(
      store.commit([{ kind: 'host', op: 'put', object: makeHost('a'), ifVersion: 'absent' }]),
      /host "a".*expected absent \(create\), actual resourceVersion 2/,
    );
    await assert.rejects(
      store.commit([{ kind: 'secret', op: 'put', object: makeSecret('s', {}), ifVersion: '7' }]),
      /secret "default\/s".*expected resourceVersion 7, actual absent/,
    );
    assert.equal((await store.getHost('a'))?.metadata.resourceVersion, '2');
    assert.equal(await store.getSecret('default', 's'), undefined);
    // Failed commits did not consume a revision.
    assert.equal((await store.commit([{ kind: 'host', op: 'put', object: makeHost('b') }])).revision, 3);
  });

  it('delete honours its precondition and deleting an absent object unconditionally is a no-op', async (store) => {
    const v = (await store.commit([{ kind: 'host', op: 'put', object: makeHost('a'), ifVersion: 'absent' }])).revision;
    await assert.rejects(store.commit([{ kind: 'host', op: 'delete', name: 'a', ifVersion: String(v + 5) }]), ConflictError);
    assert.notEqual(await store.getHost('a'), undefined);
    await store.commit([{ kind: 'host', op: 'delete', name: 'a', ifVersion: String(v) }]);
    assert.equal(await store.getHost('a'), undefined);
    await store.commit([{ kind: 'host', op: 'delete', name: 'a' }]);
    await assert.rejects(store.commit([{ kind: 'host', op: 'delete', name: 'a', ifVersion: '1' }]), ConflictError);
  });

  it('one failed precondition in a multi-change commit writes nothing', async (store) => {
    await store.commit([{ kind: 'secret', op: 'put', object: makeSecret('s1', { password: 'x' }) }]);
    await assert.rejects(
      store.commit([
        { kind: 'host', op: 'put', object: makeHost('h1'), ifVersion: 'absent' },
        { kind: 'secret', op: 'put', object: makeSecret('s2', { a: 'b' }), ifVersion: 'absent' },
        { kind: 'secret', op: 'delete', namespace: 'default', name: 's1', ifVersion: '99' },
      ]),
      ConflictError,
    );
    assert.equal(await store.getHost('h1'), undefined);
    assert.equal(await store.getSecret('default', 's2'), undefined);
    assert.notEqual(await store.getSecret('default', 's1'), undefined);
  });

  it('a multi-change commit stamps every object with the same revision and returns them in change order', async (store) => {
    const res = await store.commit([
      { kind: 'secret', op: 'put', object: makeSecret('h1-bmc', { username: 'root' }), ifVersion: 'absent' },
      { kind: 'host', op: 'put', object: makeHost('h1'), ifVersion: 'absent' },
      { kind: 'host', op: 'put', object: makeHost('h2'), ifVersion: 'absent' },
    ]);
    assert.deepEqual(res.hosts.map((h) => [h.metadata.name, h.metadata.resourceVersion]), [['h1', '1'], ['h2', '1']]);
    assert.deepEqual(res.secrets.map((s) => s.metadata.resourceVersion), ['1']);
    assert.equal(new Set([...res.hosts, ...res.secrets].map((o) => o.metadata.uid)).size, 3);
  });

  it('refuses a commit naming one object twice, or bad names and preconditions, with ValidationError', async (store) => {
    await assert.rejects(
      store.commit([
        { kind: 'host', op: 'put', object: makeHost('a') },
        { kind: 'host', op: 'delete', name: 'a' },
      ]),
      (err: unknown) => err instanceof ValidationError && /host "a" appears more than once/.test(err.message),
    );
    await assert.rejects(store.commit([{ kind: 'host', op: 'put', object: makeHost('') }]), ValidationError);
    await assert.rejects(store.commit([{ kind: 'secret', op: 'put', object: makeSecret('x/y', {}) }]), /must not contain "\/"/);
    await assert.rejects(store.commit([{ kind: 'host', op: 'delete', name: 'a', ifVersion: '' }]), ValidationError);
    assert.deepEqual(await store.listHosts(), []);
  });

  it('concurrent creates of one name: exactly one wins', async (store) => {
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => store.commit([{ kind: 'host', op: 'put', object: makeHost('race'), ifVersion: 'absent' }])),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.ok(results.every((r) => r.status === 'fulfilled' || r.reason instanceof ConflictError));
  });

  it('objects are copied in and out: neither the input nor a returned object aliases stored state', async (store) => {
    const input = makeHost('a');
    const res = await store.commit([{ kind: 'host', op: 'put', object: input }]);
    assert.equal(input.metadata.resourceVersion, '', 'the input is not stamped');
    input.spec.online = false;
    res.hosts[0]!.spec.online = false;
    const got = (await store.getHost('a'))!;
    assert.equal(got.spec.online, true);
    got.spec.online = false;
    assert.equal((await store.getHost('a'))?.spec.online, true);
  });

  it('secrets round-trip; listSecrets gives key names but never values', async (store) => {
    const secret = makeSecret('bmc', { username: 'admin', password: 'pa55' }, 'rack-1');
    await store.commit([{ kind: 'secret', op: 'put', object: secret, ifVersion: 'absent' }]);
    const got = (await store.getSecret('rack-1', 'bmc'))!;
    assert.deepEqual(got.data, secret.data);
    assert.equal(got.type, 'Opaque');
    assert.equal(got.metadata.resourceVersion, '1');
    const listed = await store.listSecrets();
    assert.deepEqual(listed.map((s) => [s.metadata.namespace, s.metadata.name, s.keys]), [['rack-1', 'bmc', ['password', 'username']]]);
    assert.ok(!JSON.stringify(listed).includes(secret.data.password!));
    await store.commit([{ kind: 'secret', op: 'delete', namespace: 'rack-1', name: 'bmc', ifVersion: '1' }]);
    assert.equal(await store.getSecret('rack-1', 'bmc'), undefined);
  });

  const changeErrors: unknown[] = [];
  it('onChange reports each write after the commit; a throwing listener does not fail the commit', async (store) => {
    const notices: ChangeNotice[] = [];
    const reported: ChangeNotice[] = [];
    store.onChange(() => {
      throw new Error('listener bug');
    });
    const off = store.onChange((n) => notices.push(n));
    store.onChange((n) => reported.push(n));
    await store.commit([
      { kind: 'host', op: 'put', object: makeHost('a') },
      { kind: 'secret', op: 'put', object: makeSecret('s', {}) },
    ]);
    await store.commit([{ kind: 'host', op: 'delete', name: 'a' }]);
    off();
    await store.commit([{ kind: 'host', op: 'put', object: makeHost('b') }]);
    assert.deepEqual(notices, [
      { kind: 'host', op: 'put', namespace: 'default', name: 'a', revision: 1 },
      { kind: 'secret', op: 'put', namespace: 'default', name: 's', revision: 1 },
      { kind: 'host', op: 'delete', namespace: 'default', name: 'a', revision: 2 },
    ]);
    assert.equal(reported.length, 4, 'listeners after the throwing one still ran');
    assert.equal(changeErrors.length, 4, 'each throw was reported');
    assert.notEqual(await store.getHost('b'), undefined);
  }, { onListenerError: (err) => changeErrors.push(err) });

  const eventErrors: unknown[] = [];
  it('a throwing onEvent listener is reported to onListenerError and does not fail the append', async (store) => {
    store.onEvent(() => {
      throw new Error('boom');
    });
    const [event] = await store.appendEvents([makeEvent('x')]);
    assert.equal(event?.seq, 1);
    assert.equal(eventErrors.length, 1);
    assert.match(String(eventErrors[0]), /boom/);
  }, { onListenerError: (err) => eventErrors.push(err) });

  it('appendEvents numbers events 1, 2, 3… and listEvents returns them oldest first', async (store) => {
    const seen: StoredEvent[] = [];
    store.onEvent((e) => seen.push(e));
    const a = await store.appendEvents([makeEvent('A'), makeEvent('B')]);
    const b = await store.appendEvents([makeEvent('C')]);
    assert.deepEqual([...a, ...b].map((e) => e.seq), [1, 2, 3]);
    assert.deepEqual((await store.listEvents()).map((e) => e.reason), ['A', 'B', 'C']);
    assert.deepEqual(seen.map((e) => e.seq), [1, 2, 3]);
  });

  it('the event log is capped, oldest dropped first, including an append larger than the cap', async (store) => {
    for (let i = 1; i <= 8; i++) await store.appendEvents([makeEvent(`e${i}`)]);
    assert.deepEqual((await store.listEvents()).map((e) => e.seq), [4, 5, 6, 7, 8]);
    const big = await store.appendEvents(Array.from({ length: 7 }, (_, i) => makeEvent(`big${i}`)));
    assert.deepEqual(big.map((e) => e.seq), [9, 10, 11, 12, 13, 14, 15]);
    assert.deepEqual((await store.listEvents()).map((e) => e.seq), [11, 12, 13, 14, 15]);
  }, { eventCap: 5 });

  it('listEvents filters by host, MAC (case-insensitively) and afterSeq, returning the newest `limit`', async (store) => {
    await store.appendEvents([
      makeEvent('a1', { host: 'a' }),
      makeEvent('b1', { host: 'b', mac: 'AA:BB:CC:00:00:01' }),
      makeEvent('a2', { host: 'a', mac: 'aa:bb:cc:00:00:02' }),
      makeEvent('a3', { host: 'a' }),
      makeEvent('m1', { mac: 'aa:bb:cc:00:00:01' }),
    ]);
    const reasons = async (f: Parameters<Store['listEvents']>[0]) => (await store.listEvents(f)).map((e) => e.reason);
    assert.deepEqual(await reasons({ host: 'a' }), ['a1', 'a2', 'a3']);
    assert.deepEqual(await reasons({ mac: 'AA:bb:cc:00:00:01' }), ['b1', 'm1']);
    assert.deepEqual(await reasons({ host: 'a', afterSeq: 1 }), ['a2', 'a3']);
    assert.deepEqual(await reasons({ limit: 2 }), ['a3', 'm1']);
    assert.deepEqual(await reasons({ host: 'a', limit: 2 }), ['a2', 'a3']);
    assert.deepEqual(await reasons({ afterSeq: 5 }), []);
    assert.deepEqual(await reasons({ limit: 0 }), []);
    assert.equal((await store.listEvents({ host: 'b' }))[0]?.mac, 'aa:bb:cc:00:00:01', 'MACs are stored lower-case');
    await assert.rejects(store.listEvents({ limit: -1 }), ValidationError);
    await assert.rejects(store.appendEvents([{ ...makeEvent('x'), type: 'Odd' as 'Normal' }]), /events\[0\]\.type/);
  });

  it('key-value sublevels put, get, delete and list in key order', async (store) => {
    await store.nodes.put('b', { power: 'on' });
    await store.nodes.put('a', [1, 2]);
    await store.leases.put('a', 'lease');
    assert.deepEqual(await store.nodes.get('b'), { power: 'on' });
    assert.deepEqual(await store.nodes.entries(), [['a', [1, 2]], ['b', { power: 'on' }]]);
    await store.nodes.del('a');
    assert.equal(await store.nodes.get('a'), undefined);
    assert.deepEqual(await store.leases.entries(), [['a', 'lease']]);
    assert.deepEqual(await store.outbox.entries(), []);
    await assert.rejects(store.images.put('x', undefined), /must not be undefined/);
  });

  it('close waits for an in-flight commit; later calls fail with StoreError', async (store) => {
    const pending = store.commit([{ kind: 'host', op: 'put', object: makeHost('last') }]);
    const closing = store.close();
    assert.equal((await pending).hosts[0]?.metadata.name, 'last');
    await closing;
    await assert.rejects(store.commit([{ kind: 'host', op: 'put', object: makeHost('late') }]), StoreError);
    await assert.rejects(store.getHost('last'), /store is closed/);
  });

  it('firmware objects commit atomically with their host, are read per kind and notify with their kind', async (store) => {
    const notices: ChangeNotice[] = [];
    store.onChange((n) => notices.push(n));
    const res = await store.commit([
      { kind: 'host', op: 'put', object: makeHost('fw'), ifVersion: 'absent' },
      { kind: 'firmware', op: 'put', object: makeFirmwareSettings('fw', { LogicalProc: 'Disabled' }), ifVersion: 'absent' },
      { kind: 'firmware', op: 'put', object: makeUpdatePolicy('fw'), ifVersion: 'absent' },
    ]);
    assert.deepEqual(res.firmware.map((o) => [o.kind, o.metadata.resourceVersion, o.metadata.uid]), [
      ['HostFirmwareSettings', '1', 'uid-2'], ['HostUpdatePolicy', '1', 'uid-3'],
    ]);
    const hfs = await store.getFirmwareObject('HostFirmwareSettings', 'default', 'fw');
    assert.deepEqual(hfs?.spec.settings, { LogicalProc: 'Disabled' });
    assert.equal(await store.getFirmwareObject('HostFirmwareSettings', 'other', 'fw'), undefined, 'keyed by namespace too');
    assert.equal(await store.getFirmwareObject('HostFirmwareComponents', 'default', 'fw'), undefined, 'and by kind');
    assert.deepEqual((await store.listFirmwareObjects('HostUpdatePolicy')).map((o) => o.metadata.name), ['fw']);
    assert.deepEqual(await store.listFirmwareObjects('FirmwareSchema'), []);
    assert.deepEqual(notices.map((n) => [n.kind, n.objectKind ?? '', n.op, n.name, n.revision]), [
      ['host', '', 'put', 'fw', 1], ['firmware', 'HostFirmwareSettings', 'put', 'fw', 1], ['firmware', 'HostUpdatePolicy', 'put', 'fw', 1],
    ]);
    // A stale firmware precondition fails the whole commit, the host write included.
    const edit = structuredClone(hfs);
    edit.status.settings = { LogicalProc: 'Enabled' };
    await assert.rejects(
      store.commit([
        { kind: 'host', op: 'put', object: makeHost('fw', 'changed'), ifVersion: '1' },
        { kind: 'firmware', op: 'put', object: edit, ifVersion: '7' },
      ]),
      (err: unknown) => err instanceof ConflictError && /firmware "HostFirmwareSettings\/default\/fw" precondition failed: expected resourceVersion 7, actual resourceVersion 1/.test(err.message),
    );
    assert.equal((await store.getHost('fw'))?.spec.description, '');
    await store.commit([
      { kind: 'host', op: 'delete', name: 'fw', ifVersion: '1' },
      { kind: 'firmware', op: 'delete', objectKind: 'HostFirmwareSettings', namespace: 'default', name: 'fw', ifVersion: '1' },
      { kind: 'firmware', op: 'delete', objectKind: 'HostFirmwareComponents', namespace: 'default', name: 'fw' },
    ]);
    assert.equal(await store.getFirmwareObject('HostFirmwareSettings', 'default', 'fw'), undefined);
    assert.ok(await store.getFirmwareObject('HostUpdatePolicy', 'default', 'fw'));
    assert.deepEqual(notices.slice(3).map((n) => [n.kind, n.objectKind ?? '', n.op]), [['host', '', 'delete'], ['firmware', 'HostFirmwareSettings', 'delete']]);
    await assert.rejects(
      store.commit([{ kind: 'firmware', op: 'delete', objectKind: 'Nonsense' as 'FirmwareSchema', namespace: 'default', name: 'x' }]),
      (err: unknown) => err instanceof ValidationError && err.field === 'changes[0].objectKind',
    );
  });

  it('reports the current schema version', async (store) => {
    assert.equal(await store.schemaVersion(), 1);
  });
}
