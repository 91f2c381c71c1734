/**
 * Discovery (docs/discovery.md) against the real agent in a network namespace, with the PXE-storm
 * simulator's firmware clients (test/lab/pxe-sim): with `dhcp.unknownHosts: discover`, a client
 * whose MAC no host has gets an address and the first stage, its iPXE gets the per-MAC script,
 * and the script boots the rackside ramdisk (kernel and initrd with their exact sizes); then a
 * storm of DISCOVERs from 5,000 MACs no host has: at most `discovery.maxPending` are admitted
 * (addresses and pending slots), every other one is refused and counted in
 * `rackside_discovery_refused_total`, the store gains no host and no more leases than the bound,
 * and the management API still answers. The "discovery off" case (no answer at all to an unknown
 * MAC) is test/integration/pxe-sim.test.ts. Needs root and `ip`; under
 * RACKSIDE_REQUIRE_INTEGRATION=1 a missing prerequisite fails the test.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { NetnsLab } from '../helpers/netns.js';
import { clientMac, openStormLab, startRacksideServer, startStorm, STORM_NETWORK } from '../lab/pxe-sim/index.js';
import { metricValue } from '../lab/pxe-sim/rackside-server.js';

const SIZES = { firstStage: 256 << 10, kernel: 512 << 10, initrd: 768 << 10 };
const MAX_PENDING = 8;
const STORM_CLIENTS = 5000;

/** The value of `name{label="value"}` in a Prometheus exposition, or undefined. */
function labelled(text: string, name: string, label: string, value: string): number | undefined {
  const match = new RegExp(`^${name}\\{${label}="${value}"\\} ([0-9.eE+-]+)$`, 'm').exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

test('discovery on: an unknown PXE client boots the discovery ramdisk; a 5000-MAC storm gains at most the bound and is counted', { timeout: 300_000 }, async (t) => {
  const lab = await NetnsLab.create(t);
  if (lab === undefined) return;
  const dir = await scratchDir('discovery');
  t.after(() => removeDir(dir));
  const storm = await openStormLab({ dir, lab, sizes: SIZES });
  const server = await startRacksideServer({
    lab, ns: storm.serverNs, dir: join(dir, 'rackside'), files: storm.files, hosts: { count: 0 }, unknownHosts: 'discover',
    extraConfig: ['discovery:', `  maxPending: ${MAX_PENDING}`, '  maxHosts: 4'].join('\n'),
  });
  t.after(() => server.stop());

  const first = await startStorm({ lab, ns: storm.clientNs, dir, clients: 1, firstIndex: 3, blksize: 1468, windowsize: 4, expected: SIZES }).result;
  const client = first.clients[0];
  assert.equal(client?.mac, clientMac(3));
  assert.equal(client.failure, undefined, `the unknown client booted: ${JSON.stringify(client.failure)}\n${server.output().slice(-3000)}`);
  const base = `http://${STORM_NETWORK.serverAddress}:${STORM_NETWORK.httpPort}`;
  assert.match(client.phases.dhcp1?.detail ?? '', /^10\.88\.\d+\.\d+ from 10\.88\.0\.1, boot file ipxe\.efi$/, 'an address and a boot file');
  assert.equal(client.phases.dhcp2?.detail, `${client.address ?? '?'}, script ${base}/boot/${clientMac(3).replaceAll(':', '-')}.ipxe`);
  assert.equal(client.phases.kernel?.detail, `${base}/ramdisk/vmlinuz`);
  assert.equal(client.phases.initrd?.bytes, SIZES.initrd);
  let metrics = await server.metrics();
  assert.equal(metricValue(metrics, 'rackside_discovery_admitted_total'), 1);
  assert.equal(metricValue(metrics, 'rackside_discovery_pending'), 1);

  // Each storm client sends one DISCOVER and waits 2 s for an offer: refused MACs get none.
  const flood = await startStorm({
    lab, ns: storm.clientNs, dir, clients: STORM_CLIENTS, firstIndex: 10_000, rampMs: 5000, lastPhase: 'dhcp1', timeouts: { dhcpWaitsMs: [2000] },
  }).result;
  const answered = flood.clients.filter((c) => c.failure === undefined).length;
  assert.equal(answered, MAX_PENDING - 1, 'the pending slots left were admitted, no more');
  metrics = await server.metrics();
  assert.equal(metricValue(metrics, 'rackside_discovery_pending'), MAX_PENDING);
  const refused = labelled(metrics, 'rackside_discovery_refused_total', 'reason', 'pending-full') ?? 0;
  assert.ok(refused >= STORM_CLIENTS - answered, `every other MAC was refused and counted (${refused})`);
  assert.ok((labelled(metrics, 'rackside_dhcp_ignored_total', 'reason', 'discovery-refused') ?? 0) >= STORM_CLIENTS - answered);
  assert.ok((metricValue(metrics, 'rackside_dhcp_leases') ?? Infinity) <= MAX_PENDING, 'no lease for a refused MAC');
  const hosts = await fetch(`${server.managementUrl}/api/v1/hosts`, { signal: AbortSignal.timeout(30_000) });
  assert.equal(hosts.status, 200, 'the management API answers after the storm');
  assert.deepEqual(((await hosts.json()) as { items: unknown[] }).items, [], 'DHCP alone records no host');
  // The refusal is said once a minute at most (the event is a needle among the flight recorder's; the log line is its twin).
  const said = server.output().split('\n').filter((line) => line.includes('discovery refused unknown MACs'));
  assert.ok(said.length >= 1 && said.length <= 2, `the agent said the limit bit, rate-limited (${said.length} times)`);
  assert.match(said[0] ?? '', /pending-full/);
});
