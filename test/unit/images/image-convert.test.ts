/**
 * The image cache's CPU-heavy work runs below the agent's priority: `convertToRaw`'s qemu-img
 * (images/image-convert.ts, CONVERT_NICE_STEPS) and `hashFile`'s worker thread
 * (images/hash-worker.ts); and a missing qemu-img names its package. A stand-in qemu-img (a shell
 * script) writes the nice value it runs at into the destination; the hashing thread is found in
 * /proc/self/task while it works. The real conversion is covered by image-cache.test.ts.
 */
import assert from 'node:assert/strict';
import { chmod, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { hashFile } from '../../../images/hash-file.js';
import { backgroundNice, CONVERT_NICE_STEPS, convertToRaw, ImageConvertError } from '../../../images/image-convert.js';
import { removeDir, scratchDir } from '../../helpers/agent-process.js';
import { mainThreadNice, ownThreads } from '../../helpers/threads.js';
import { runMainThreadAtUnitNice } from '../../helpers/unit-nice.js';

// As systemd starts the agent (Nice=-5): background work still goes CONVERT_NICE_STEPS below normal, not below the raised event loop.
runMainThreadAtUnitNice();

/** The nice value for background work of this process: CONVERT_NICE_STEPS below normal or below the agent's, whichever is lower. */
const lowered = (): number => backgroundNice(mainThreadNice());

test('background work runs CONVERT_NICE_STEPS below normal priority, never raised with the event loop, at most nice 19', () => {
  assert.deepEqual([-5, 0, 5, 15].map(backgroundNice), [CONVERT_NICE_STEPS, CONVERT_NICE_STEPS, 5 + CONVERT_NICE_STEPS, 19]);
});

test('qemu-img convert runs CONVERT_NICE_STEPS nice levels below the agent', async (t) => {
  const dir = await scratchDir('convert-nice');
  t.after(() => removeDir(dir));
  const fake = join(dir, 'qemu-img');
  // Waits a moment (the priority is set right after the spawn), then records its nice value
  // (field 19 of /proc/PID/stat) in the last argument, the destination.
  await writeFile(fake, '#!/bin/sh\nsleep 0.3\nfor a; do dest=$a; done\nawk \'{print $19}\' /proc/$$/stat > "$dest"\n');
  await chmod(fake, 0o755);
  const dest = join(dir, 'out.raw');
  await convertToRaw(join(dir, 'in.qcow2'), 'qcow2', dest, fake);
  assert.equal(Number((await readFile(dest, 'utf8')).trim()), lowered());
});

test('a missing qemu-img is an ImageConvertError naming the package', async () => {
  await assert.rejects(convertToRaw('/nonexistent/in.qcow2', 'qcow2', '/nonexistent/out.raw', '/nonexistent/qemu-img'), (err: unknown) => {
    assert.ok(err instanceof ImageConvertError);
    assert.match(err.message, /apt-get install qemu-utils/);
    return true;
  });
});

test('hashFile hashes on a thread CONVERT_NICE_STEPS nice levels below the agent', async (t) => {
  const dir = await scratchDir('hash-nice');
  t.after(() => removeDir(dir));
  const file = join(dir, 'image.raw');
  // Sparse: reading costs little, hashing 256 MiB twice takes the worker about a second.
  await writeFile(file, '');
  await truncate(file, 256 * 1024 * 1024);
  const own = mainThreadNice();
  const target = lowered();
  let seen = false;
  const hashing = hashFile(file, ['sha256', 'sha512']);
  const state = { done: false };
  void hashing.finally(() => { state.done = true; });
  while (!state.done && !seen) {
    // A thread other than the event loop, which keeps its own value.
    seen = ownThreads().some((thread) => thread.tid !== process.pid && thread.nice === target);
    await new Promise((r) => setTimeout(r, 5));
  }
  const digests = await hashing;
  assert.equal(digests.sha256?.length, 64);
  assert.ok(seen, `no thread at nice ${String(target)} while hashing (the agent runs at ${String(own)})`);
  assert.equal(mainThreadNice(), own, 'the event loop keeps its priority');
});
