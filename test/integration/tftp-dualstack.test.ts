/**
 * rackside's TFTP server on `[::]:69`, the default when the provisioning network has IPv6, with
 * its native sockets and transfer thread on (the agent's defaults): curl in a peer namespace
 * fetches a 3 MB file over IPv6 and over IPv4 (an IPv4-mapped client of the dual-stack socket),
 * both byte for byte, both through the transfer thread; the flight-recorder mapping names the
 * IPv4 client by its plain address.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { toTftpBootEvent } from '../../bootsvc/tftp/boot-events.js';
import type { TftpEvent } from '../../bootsvc/tftp/server-types.js';
import { NetnsLab, waitFor } from '../helpers/netns.js';
import { enableIpv6 } from './dhcp6-peers.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'tftp-server-child.js');

test('TFTP on [::]:69 with the transfer thread serves IPv6 and IPv4 clients', { timeout: 60_000 }, async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['curl'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-tftp-ds-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const content = randomBytes(3_000_000);
  await writeFile(join(dir, 'big.bin'), content);
  const srv = await lab.namespace('tftpds');
  const peer = await lab.namespace('tftpdc');
  await enableIpv6(lab, srv, []);
  await enableIpv6(lab, peer, []);
  await lab.link(srv, 'eth0', peer, 'eth0', { a: '10.79.0.1/24', b: '10.79.0.2/24' });
  await enableIpv6(lab, srv, ['eth0']);
  await enableIpv6(lab, peer, ['eth0']);
  await lab.exec(srv, 'ip', ['addr', 'add', 'fd00:79::1/64', 'dev', 'eth0', 'nodad']);
  await lab.exec(peer, 'ip', ['addr', 'add', 'fd00:79::2/64', 'dev', 'eth0', 'nodad']);
  const server = lab.spawn(srv, process.execPath, [CHILD, JSON.stringify({ listen: { host: '::', port: 69 }, roots: [dir], transferThread: true })]);
  await waitFor(() => server.stdout().includes('"listening"') || (server.child.exitCode !== null ? 'exited' : false), 'the TFTP server');
  for (const [url, out] of [['tftp://[fd00:79::1]/big.bin', 'got6.bin'], ['tftp://10.79.0.1/big.bin', 'got4.bin']] as const) {
    const got = await lab.exec(peer, 'curl', ['-sS', '-o', join(dir, out), url], { allowFailure: true });
    assert.equal(got.code, 0, `${url}: ${got.stderr}`);
    assert.ok((await readFile(join(dir, out))).equals(content), `${url}: the same bytes`);
  }
  await server.stop('SIGTERM');
  const lines = server.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const stats = lines.find((l) => l.type === 'stats');
  assert.equal(stats?.threadedTransfers, 2, JSON.stringify(stats));
  assert.equal(stats.completedTransfers, 2);
  const done = lines.filter((l) => l.type === 'done').map((l) => toTftpBootEvent(l as unknown as TftpEvent)?.clientAddress);
  assert.deepEqual(done, ['fd00:79::2', '10.79.0.2']);
});
