/**
 * The agent's TFTP service with a real client (curl): the first-stage iPXE binary from the
 * Debian package, the GRUB entry config rendered on the fly, a fast "not found" for shim's
 * probes, the ramdisk mount GRUB loads kernels from (and nothing outside it), and the transfers in
 * the flight recorder.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { requireTools } from '../helpers/integration.js';
import { freeUdpPort, startLocalAgent } from '../helpers/local-agent.js';

const run = promisify(execFile);
const UNDIONLY = '/usr/lib/ipxe/undionly.kpxe';

test('TFTP serves iPXE and GRUB configs to real clients, refuses probes fast, and records transfers', async (t) => {
  if (!requireTools(t, ['curl'])) return;
  const undionly = await readFile(UNDIONLY).catch(() => undefined);
  if (undionly === undefined) {
    if (process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') throw new Error(`${UNDIONLY} missing (package ipxe)`);
    t.skip(`${UNDIONLY} missing (package ipxe)`);
    return;
  }
  const dir = await scratchDir('tftp-agent');
  t.after(() => removeDir(dir));
  const tftpPort = await freeUdpPort();
  const { agent } = await startLocalAgent(t, dir, ['provisioning:', '  interface: lo', '  address: 127.0.0.1', 'tftp:', `  listen: 127.0.0.1:${tftpPort}`]);

  const out = join(dir, 'undionly.kpxe');
  await run('curl', ['-s', '--max-time', '20', '--tftp-blksize', '1468', '-o', out, `tftp://127.0.0.1:${tftpPort}/undionly.kpxe`]);
  const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
  assert.equal(sha(await readFile(out)), sha(undionly));

  const grub = await run('curl', ['-s', '--max-time', '20', `tftp://127.0.0.1:${tftpPort}/grub/grub.cfg`]);
  assert.match(grub.stdout, /configfile "\$prefix\/\$net_default_mac\.cfg"/);

  const started = Date.now();
  const probe = await run('curl', ['-s', '--max-time', '20', `tftp://127.0.0.1:${tftpPort}/revocations_sku.efi`]).then(() => 0, (e: unknown) => (e as { code?: number }).code ?? -1);
  assert.notEqual(probe, 0, 'a probe is not found');
  assert.ok(Date.now() - started < 10_000, 'answered, not timed out');

  // The ramdisk mount, as GRUB (Secure Boot, arm64) loads it over TFTP; nothing outside it.
  const ramdiskDir = join(dir, 'cache', 'ramdisk');
  const initrd = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31) & 255));
  await writeFile(join(ramdiskDir, 'initrd'), initrd);
  await symlink('/etc/passwd', join(ramdiskDir, 'escape'));
  const fetched = join(dir, 'initrd.fetched');
  await run('curl', ['-s', '--max-time', '20', '--tftp-blksize', '8192', '-o', fetched, `tftp://127.0.0.1:${tftpPort}/ramdisk/initrd`]);
  assert.equal(sha(await readFile(fetched)), sha(initrd));
  for (const refused of ['ramdisk/escape', 'images/anything', 'configdrive/x']) {
    const code = await run('curl', ['-s', '--max-time', '20', '-o', join(dir, 'refused'), `tftp://127.0.0.1:${tftpPort}/${refused}`]).then(() => 0, (e: unknown) => (e as { code?: number }).code ?? -1);
    assert.notEqual(code, 0, `${refused} is not served over TFTP`);
  }

  let events: { source: string; reason: string }[] = [];
  for (let i = 0; i < 50 && !events.some((e) => e.source === 'bootsvc:tftp'); i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    events = await agent.store.listEvents({ limit: 100 });
  }
  assert.ok(events.some((e) => e.source === 'bootsvc:tftp'), JSON.stringify(events.map((e) => `${e.source}:${e.reason}`)));
  const metrics = await (await fetch(`${agent.managementUrl}/metrics`)).text();
  assert.match(metrics, /^rackside_tftp_transfers_total\{outcome="done"\} [1-9]/m);
});
