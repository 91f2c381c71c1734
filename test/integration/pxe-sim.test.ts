/**
 * The PXE-storm simulator (test/lab/pxe-sim) against the real agent in a network namespace: one
 * simulated UEFI client, registered as a host the agent is inspecting, goes through every phase
 * in order — DHCP as firmware, TFTP of the first stage with the options it asked for, DHCP as
 * iPXE handing out its per-MAC script URL, the script, the ramdisk kernel and initrd — with the
 * exact sizes, started through the CLI in the client namespace as a bench would; and a client
 * whose MAC no host has gets no DHCP answer (`unknownHosts: ignore`) and is reported failed in
 * `dhcp1` with its retransmissions, not hung. Needs root and `ip`; under
 * RACKSIDE_REQUIRE_INTEGRATION=1 a missing prerequisite fails the test.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { NetnsLab } from '../helpers/netns.js';
import { PHASES, clientMac, openStormLab, startRacksideServer, startStorm, STORM_NETWORK } from '../lab/pxe-sim/index.js';

const SIZES = { firstStage: 1 << 20, kernel: 2 << 20, initrd: 3 << 20 };

test('a simulated firmware client boots through DHCP, TFTP, iPXE DHCP and HTTP from the agent, in order; an unknown one fails in dhcp1', { timeout: 120_000 }, async (t) => {
  const lab = await NetnsLab.create(t);
  if (lab === undefined) return;
  const dir = await scratchDir('pxe-sim');
  t.after(() => removeDir(dir));
  const storm = await openStormLab({ dir, lab, sizes: SIZES });
  const server = await startRacksideServer({ lab, ns: storm.serverNs, dir: join(dir, 'rackside'), files: storm.files, hosts: { count: 1 } });
  t.after(() => server.stop());

  const known = await startStorm({ lab, ns: storm.clientNs, dir, clients: 1, blksize: 1468, windowsize: 4, expected: SIZES }).result;
  const client = known.clients[0];
  assert.ok(client !== undefined);
  assert.equal(client.failure, undefined, `the client booted: ${JSON.stringify(client.failure)}`);
  assert.equal(client.mac, clientMac(0));
  let previousEnd = 0;
  for (const name of PHASES) {
    const phase = client.phases[name];
    assert.ok(phase !== undefined, `phase ${name} ran`);
    assert.ok(phase.startMs >= previousEnd && phase.endMs >= phase.startMs, `${name} starts after the previous phase ended`);
    previousEnd = phase.endMs;
  }
  const mac = clientMac(0).replaceAll(':', '-');
  const base = `http://${STORM_NETWORK.serverAddress}:${STORM_NETWORK.httpPort}`;
  assert.match(client.phases.dhcp1?.detail ?? '', /^10\.88\.\d+\.\d+ from 10\.88\.0\.1, boot file ipxe\.efi$/);
  assert.equal(client.phases.tftp?.bytes, SIZES.firstStage);
  assert.match(client.phases.tftp.detail ?? '', /ipxe\.efi: blksize 1468, windowsize 4/, 'the agent granted the TFTP options asked for');
  assert.equal(client.phases.dhcp2?.detail, `${client.address ?? '?'}, script ${base}/boot/${mac}.ipxe`);
  assert.equal(client.phases.kernel?.detail, `${base}/ramdisk/vmlinuz`);
  assert.equal(client.phases.kernel.bytes, SIZES.kernel);
  assert.equal(client.phases.initrd?.detail, `${base}/ramdisk/initrd`);
  assert.equal(client.phases.initrd.bytes, SIZES.initrd);

  const unknown = await startStorm({ lab, ns: storm.clientNs, dir, clients: 1, firstIndex: 7, timeouts: { dhcpWaitsMs: [300, 300, 300] } }).result;
  const stranger = unknown.clients[0];
  assert.equal(stranger?.mac, clientMac(7));
  assert.equal(stranger.failure?.phase, 'dhcp1');
  assert.match(stranger.failure.reason, /no OFFER with a boot file after 3 DISCOVERs/);
  assert.equal(stranger.phases.dhcp1?.retransmissions, 2);
  assert.equal(stranger.phases.tftp, undefined, 'nothing after the failed phase');
});
