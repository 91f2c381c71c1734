/**
 * @module The LevelDB store: the shared contract, plus what only a persistent store has —
 * durability across reopen, the key file, encryption at rest, locking and migrations.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { SCHEMA_VERSION, StoreError, StoreErrorCode, openStore, type Migration, type Store } from '../../../agent/store/index.js';
import { makeEvent, makeFirmwareSettings, makeHost, makeSecret } from './fixtures.js';
import { runStoreSuite } from './store-suite.js';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'rackside-store-'));
}

runStoreSuite('level store', async (options) => {
  const stateDir = await tempDir();
  const store = await openStore({ stateDir, ...options });
  return {
    store,
    dispose: async () => {
      await store.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
});

/** Runs `fn` with a fresh state directory, removed afterwards. */
async function inStateDir(fn: (stateDir: string) => Promise<void>): Promise<void> {
  const stateDir = await tempDir();
  try {
    await fn(stateDir);
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function reopen(stateDir: string, fn: (store: Store) => Promise<void>, migrations?: Migration[]): Promise<void> {
  const store = await openStore(migrations === undefined ? { stateDir } : { stateDir, migrations });
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

test('the revision, objects, uid and events survive close and reopen', () =>
  inStateDir(async (stateDir) => {
    let uid = '';
    await reopen(stateDir, async (store) => {
      for (let i = 0; i < 3; i++) await store.commit([{ kind: 'host', op: 'put', object: makeHost('a') }]);
      uid = (await store.getHost('a'))!.metadata.uid;
      await store.appendEvents([makeEvent('one'), makeEvent('two')]);
    });
    await reopen(stateDir, async (store) => {
      const host = await store.getHost('a');
      assert.equal(host?.metadata.resourceVersion, '3');
      assert.equal(host.metadata.uid, uid);
      const res = await store.commit([{ kind: 'host', op: 'put', object: makeHost('a'), ifVersion: '3' }]);
      assert.equal(res.revision, 4);
      const [next] = await store.appendEvents([makeEvent('three')]);
      assert.equal(next?.seq, 3);
      assert.deepEqual((await store.listEvents()).map((e) => e.reason), ['one', 'two', 'three']);
    });
  }));

test('the event cap keeps holding across reopen', () =>
  inStateDir(async (stateDir) => {
    const open = () => openStore({ stateDir, eventCap: 3 });
    let store = await open();
    await store.appendEvents([makeEvent('1'), makeEvent('2'), makeEvent('3'), makeEvent('4')]);
    await store.close();
    store = await open();
    await store.appendEvents([makeEvent('5')]);
    assert.deepEqual((await store.listEvents()).map((e) => e.seq), [3, 4, 5]);
    await store.close();
  }));

test('creates secret.key with 32 bytes and mode 0600, and the state directory 0700', () =>
  inStateDir(async (parent) => {
    const stateDir = join(parent, 'state');
    await reopen(stateDir, () => Promise.resolve());
    const key = await stat(join(stateDir, 'secret.key'));
    assert.equal(key.mode & 0o777, 0o600);
    assert.equal(key.size, 32);
    assert.equal((await stat(stateDir)).mode & 0o777, 0o700);
    const before = await readFile(join(stateDir, 'secret.key'));
    await reopen(stateDir, () => Promise.resolve());
    assert.deepEqual(await readFile(join(stateDir, 'secret.key')), before, 'an existing key is kept');
    assert.deepEqual((await readdir(stateDir)).sort(), ['db', 'secret.key'], 'no temp file left behind');
  }));

const badKeys: Record<string, { bytes: number; mode: number; message: RegExp }> = {
  'a 16-byte key file': { bytes: 16, mode: 0o600, message: /secret\.key is 16 bytes, expected 32/ },
  'an empty key file': { bytes: 0, mode: 0o600, message: /is 0 bytes, expected 32/ },
  'a group-readable key file': { bytes: 32, mode: 0o640, message: /has mode 0640 .*chmod 600/ },
  'a world-readable key file': { bytes: 32, mode: 0o604, message: /has mode 0604/ },
};
for (const [name, c] of Object.entries(badKeys)) {
  test(`refuses to start with ${name}, and releases the database`, () =>
    inStateDir(async (stateDir) => {
      const keyPath = join(stateDir, 'secret.key');
      await writeFile(keyPath, Buffer.alloc(c.bytes, 7), { mode: 0o600 });
      await chmod(keyPath, c.mode);
      await assert.rejects(openStore({ stateDir }), (err: unknown) => {
        assert.ok(err instanceof StoreError);
        assert.equal(err.code, StoreErrorCode.keyFile);
        assert.match(err.message, c.message);
        return true;
      });
      await writeFile(keyPath, Buffer.alloc(32, 7));
      await chmod(keyPath, 0o600);
      await reopen(stateDir, async (store) => {
        assert.equal(await store.schemaVersion(), SCHEMA_VERSION);
      });
    }));
}

/** Every byte of every file under `dir`, concatenated. */
async function allBytes(dir: string): Promise<Buffer> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  return Buffer.concat(await Promise.all(files.map((f) => readFile(f))));
}

test('byte search: a secret value appears nowhere on disk, in clear or base64, while host data does', () =>
  inStateDir(async (stateDir) => {
    const password = 'Zq7-correct-horse-battery-staple-4411';
    await reopen(stateDir, async (store) => {
      await store.commit([
        { kind: 'host', op: 'put', object: makeHost('needle-host-8842') },
        { kind: 'secret', op: 'put', object: makeSecret('needle-host-8842-bmc', { username: 'admin', password }) },
      ]);
      assert.equal(
        Buffer.from((await store.getSecret('default', 'needle-host-8842-bmc'))!.data.password!, 'base64').toString(),
        password,
      );
    });
    const disk = await allBytes(join(stateDir, 'db'));
    assert.ok(disk.includes('needle-host-8842'), 'control: unencrypted data is findable by this search');
    for (const form of [password, Buffer.from(password).toString('base64')]) {
      assert.ok(!disk.includes(form), `found ${form} on disk`);
      assert.ok(!disk.includes(Buffer.from(form, 'utf16le')), `found ${form} (UTF-16) on disk`);
    }
  }));

/** Rewrites the raw JSON record of secret `key` through `edit`, with the store closed. */
async function editRawSecret(stateDir: string, edit: (db: Level<string, unknown>) => Promise<void>): Promise<void> {
  const db = new Level<string, unknown>(join(stateDir, 'db'), { valueEncoding: 'json' });
  await db.open();
  try {
    await edit(db);
  } finally {
    await db.close();
  }
}

test('a tampered secret record fails with an error naming the secret', () =>
  inStateDir(async (stateDir) => {
    await reopen(stateDir, async (store) => {
      await store.commit([
        { kind: 'secret', op: 'put', object: makeSecret('flipped', { password: 'p1' }) },
        { kind: 'secret', op: 'put', object: makeSecret('moved', { password: 'p2' }) },
        { kind: 'secret', op: 'put', object: makeSecret('intact', { password: 'p3' }) },
      ]);
    });
    await editRawSecret(stateDir, async (db) => {
      const secrets = db.sublevel<string, { enc: string }>('secrets', { valueEncoding: 'json' });
      const rec = (await secrets.get('default/flipped'))!;
      const raw = Buffer.from(rec.enc, 'base64');
      raw[raw.length - 1]! ^= 0x01;
      await secrets.put('default/flipped', { ...rec, enc: raw.toString('base64') });
      // A valid record for another name: the associated data binds it to its own name.
      await secrets.put('default/moved', (await secrets.get('default/intact'))!);
    });
    await reopen(stateDir, async (store) => {
      for (const name of ['flipped', 'moved']) {
        await assert.rejects(store.getSecret('default', name), (err: unknown) => {
          assert.ok(err instanceof StoreError);
          assert.equal(err.code, StoreErrorCode.corrupt);
          assert.match(err.message, new RegExp(`stored secret "default/${name}" cannot be decrypted`));
          return true;
        });
      }
      assert.equal((await store.getSecret('default', 'intact'))?.data.password, Buffer.from('p3').toString('base64'));
    });
  }));

test('a second open of a state directory in use fails with a clear lock error', () =>
  inStateDir(async (stateDir) => {
    await reopen(stateDir, async () => {
      await assert.rejects(openStore({ stateDir }), (err: unknown) => {
        assert.ok(err instanceof StoreError);
        assert.equal(err.code, StoreErrorCode.locked);
        assert.match(err.message, /state directory .* is in use by another rackside agent \(LevelDB lock/);
        return true;
      });
    });
  }));

test('migrations run once, in order, above the stored version; a newer database refuses to open', () =>
  inStateDir(async (stateDir) => {
    await reopen(stateDir, async (store) => {
      await store.nodes.put('n1', { v: 1 });
    });
    const ran: string[] = [];
    const migrations: Migration[] = [
      {
        version: 3,
        description: 'tag nodes v3',
        up: async (db) => {
          ran.push(`3 from ${db.fromVersion}`);
          await db.sublevel('nodes').put('n1', { ...((await db.sublevel('nodes').get('n1')) as object), three: true });
        },
      },
      {
        version: 2,
        description: 'tag nodes v2',
        up: async (db) => {
          ran.push(`2 from ${db.fromVersion}`);
          await db.sublevel('nodes').put('n1', { ...((await db.sublevel('nodes').get('n1')) as object), two: true });
        },
      },
    ];
    await reopen(stateDir, async (store) => {
      assert.equal(await store.schemaVersion(), 3);
      assert.deepEqual(await store.nodes.get('n1'), { v: 1, two: true, three: true });
    }, migrations);
    assert.deepEqual(ran, ['2 from 1', '3 from 2']);
    await reopen(stateDir, async (store) => {
      assert.equal(await store.schemaVersion(), 3);
    }, migrations);
    assert.equal(ran.length, 2, 'not run again');
    await assert.rejects(openStore({ stateDir }), (err: unknown) => {
      assert.ok(err instanceof StoreError);
      assert.equal(err.code, StoreErrorCode.schema);
      assert.match(err.message, /schema version 3, newer than this rackside supports \(1\)/);
      return true;
    });
    // The refused open released the lock.
    await reopen(stateDir, () => Promise.resolve(), migrations);
  }));

test('a failing migration stops the open and leaves the version where it was', () =>
  inStateDir(async (stateDir) => {
    await reopen(stateDir, () => Promise.resolve());
    const failing: Migration[] = [{ version: 2, description: 'explode', up: () => Promise.reject(new Error('disk on fire')) }];
    await assert.rejects(openStore({ stateDir, migrations: failing }), /schema version 2 \("explode"\) failed: disk on fire; the database is still at version 1/);
    await reopen(stateDir, async (store) => {
      assert.equal(await store.schemaVersion(), 1);
    });
    await assert.rejects(
      openStore({ stateDir, migrations: [...failing, { version: 2, description: 'twin', up: () => Promise.resolve() }] }),
      /two migrations have version 2/,
    );
  }));

test('a fresh database is stamped with the newest version without running migrations', () =>
  inStateDir(async (stateDir) => {
    let ran = 0;
    const migrations: Migration[] = [{ version: 2, description: 'count', up: () => {
      ran++;
      return Promise.resolve();
    } }];
    await reopen(stateDir, async (store) => {
      assert.equal(await store.schemaVersion(), 2);
    }, migrations);
    assert.equal(ran, 0);
  }));

test('firmware objects survive close and reopen; a database written before the firmware sublevel opens unchanged', () =>
  inStateDir(async (stateDir) => {
    await reopen(stateDir, async (store) => {
      await store.commit([{ kind: 'host', op: 'put', object: makeHost('old') }]);
    });
    await reopen(stateDir, async (store) => {
      assert.equal(await store.schemaVersion(), SCHEMA_VERSION);
      assert.deepEqual(await store.listFirmwareObjects('HostFirmwareSettings'), []);
      await store.commit([{ kind: 'firmware', op: 'put', object: makeFirmwareSettings('old', { BootMode: 'Uefi' }), ifVersion: 'absent' }]);
    });
    await reopen(stateDir, async (store) => {
      const hfs = await store.getFirmwareObject('HostFirmwareSettings', 'default', 'old');
      assert.deepEqual([hfs?.spec.settings, hfs?.metadata.resourceVersion], [{ BootMode: 'Uefi' }, '2']);
      assert.equal((await store.getHost('old'))?.metadata.resourceVersion, '1');
    });
  }));
