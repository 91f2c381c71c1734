/**
 * The `/api/v1/status` mapping (agent/status-report.ts): each mapper table-tested with the shapes
 * the agent really produces (BootHttpStats, DhcpServerStats, TftpServerStats, PowerSweepEntry,
 * TunnelStatus), and the reporter end to end: missing sources, a throwing source, throughput
 * between calls and BMC "since" across sweeps.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PowerSweepEntry } from '../../agent/bmc/power-sweep.js';
import type { TunnelStatus } from '../../agent/ssh/index.js';
import {
  countPoolAddresses,
  createStatusReporter,
  mapBmcReachability,
  mapDhcp6Status,
  mapDhcpStatus,
  mapHttpStatus,
  mapImageDownloads,
  mapSshStatus,
  mapTftpStatus,
  rateBetween,
  stripUserInfo,
  type BmcObservation,
  type BootServicesConfig,
  type ImageDownloadInput,
  type SshSourceStatus,
} from '../../agent/status-report.js';
import { countPool6Addresses } from '../../agent/config-dhcp6.js';
import type { AgentStatusReport, DhcpServiceStatus, TransferServiceStatus } from '../../agent/web/ui/index.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');

/** A DhcpServerStats as bootsvc/dhcp/dhcp-server.ts returns it after some traffic. */
function dhcpStats(overrides: { records?: number; writeErrors?: number; lookupErrors?: number } = {}): Record<string, unknown> {
  return {
    received: { '67': 412, '4011': 3 },
    replies: { offer: 120, ack: 118, nak: 2 },
    ignored: { 'unknown-client': 40 },
    dropped: { malformed: 1 },
    lookupErrors: overrides.lookupErrors ?? 0,
    released: 4,
    declined: 0,
    hardwareUnicast: 100,
    hardwareUnicastFallbacks: 0,
    inFlight: 1,
    leases: { records: overrides.records ?? 37, writes: 160, writeErrors: overrides.writeErrors ?? 0, coalesced: 3, pending: 0, memoryOnly: 2 },
  };
}

/** A BootHttpStats while two kernels are being fetched. */
const HTTP_STATS = {
  requests: 260, bytes: 1_250_000_000, active: 2,
  byStatus: { '200': 230, '206': 4, '304': 1, '404': 20, '400': 1 },
  generated: 118, probes: 20, refused: 1, aborted: 3, errors: 0,
};

/** A TftpServerStats (bootsvc/tftp/server-types.ts). */
const TFTP_STATS = {
  requests: 130, activeTransfers: 4, completedTransfers: 118, failedTransfers: 2, refusedRequests: 0, notFound: 6,
  malformedPackets: 0, unexpectedPackets: 0, busyDrops: 0, duplicateRequests: 5, bytesSent: 120_000_000, retransmittedPackets: 9, duplicateAcks: 1,
};

const FULL: BootServicesConfig = { dhcpMode: 'full', dhcpInterface: 'eno2', dhcpAddress: '172.22.0.1', dhcpPoolAddresses: 100, httpListen: '172.22.0.1:8081', tftpListen: '172.22.0.1:69' };

const dhcpCases: Record<string, { stats: unknown; config: BootServicesConfig | undefined; want: DhcpServiceStatus | undefined }> = {
  'full mode: leases used from the lease table, free from the pool': {
    stats: dhcpStats(), config: FULL,
    want: { mode: 'full', healthy: true, message: 'on eno2 (172.22.0.1)', leasesUsed: 37, leasesFree: 63 },
  },
  'full mode with a pool smaller than the table (ranges shrunk): free is 0, not negative': {
    stats: dhcpStats({ records: 140 }), config: FULL,
    want: { mode: 'full', healthy: true, message: 'on eno2 (172.22.0.1)', leasesUsed: 140, leasesFree: 0 },
  },
  'lease write and lookup failures are noted': {
    stats: dhcpStats({ writeErrors: 2, lookupErrors: 5 }), config: { dhcpMode: 'full' },
    want: { mode: 'full', healthy: true, message: '2 lease writes failed · 5 boot lookups failed', leasesUsed: 37 },
  },
  'proxy mode has no leases': {
    stats: dhcpStats(), config: { dhcpMode: 'proxy', dhcpInterface: 'eno2' },
    want: { mode: 'proxy', healthy: true, message: 'on eno2' },
  },
  'off, as boot-services reports it': {
    stats: { mode: 'off' }, config: { dhcpMode: 'off' },
    want: { mode: 'off', healthy: true },
  },
  'configured but not started (no provisioning interface)': {
    stats: { mode: 'off' }, config: { dhcpMode: 'full' },
    want: { mode: 'full', healthy: false, message: 'not running: provisioning.interface and provisioning.address are needed' },
  },
  'no config: a running server reads as full': {
    stats: dhcpStats(), config: undefined,
    want: { mode: 'full', healthy: true, leasesUsed: 37 },
  },
  'no stats at all': { stats: undefined, config: FULL, want: undefined },
};
for (const [name, c] of Object.entries(dhcpCases)) {
  test(`mapDhcpStatus: ${name}`, () => {
    assert.deepEqual(mapDhcpStatus(c.stats, c.config), c.want);
  });
}

/** Dhcp6ServerStats as agent/boot/boot-services6.ts returns it, with router advertisements when they run. */
const dhcp6Stats = (records: number, ra?: { unsolicitedSent: number; solicitedSent: number }): Record<string, unknown> => ({
  received: 40, replies: {}, ignored: {}, dropped: {}, lookupErrors: 0, leases: { records, writes: records, writeErrors: 0, pending: 0 },
  ...(ra === undefined ? {} : { routerAdvertisements: { ...ra, solicitationsReceived: 1, dropped: { malformed: 0 }, sendErrors: 0 } }),
});
const FULL6: BootServicesConfig = { ...FULL, dhcp6Mode: 'full', dhcp6Address: 'fd00:1::1', dhcp6PoolAddresses: 256 };

const dhcp6Cases: Record<string, { stats: unknown; config: BootServicesConfig | undefined; want: DhcpServiceStatus | undefined }> = {
  'no dhcp6 section: no line': { stats: { mode: 'off' }, config: FULL, want: undefined },
  'full with leases and router advertisements': {
    stats: dhcp6Stats(3, { unsolicitedSent: 4, solicitedSent: 2 }), config: FULL6,
    want: { mode: 'full', healthy: true, message: 'on eno2 (fd00:1::1) · 6 router advertisements sent', leasesUsed: 3, leasesFree: 253 },
  },
  'full without router advertisements': { stats: dhcp6Stats(0), config: FULL6, want: { mode: 'full', healthy: true, message: 'on eno2 (fd00:1::1)', leasesUsed: 0, leasesFree: 256 } },
  'configured full, not started': { stats: { mode: 'off' }, config: { dhcpMode: 'off', dhcp6Mode: 'full' }, want: { mode: 'full', healthy: false, message: 'not running: provisioning.interface, an IPv6 provisioning.address and dhcp6.range are needed' } },
  'configured off': { stats: { mode: 'off' }, config: { dhcpMode: 'off', dhcp6Mode: 'off' }, want: { mode: 'off', healthy: true } },
};

for (const [name, c] of Object.entries(dhcp6Cases)) {
  test(`mapDhcp6Status: ${name}`, () => {
    assert.deepEqual(mapDhcp6Status(c.stats, c.config), c.want);
  });
}

test('countPool6Addresses adds the ranges up', () => {
  assert.equal(countPool6Addresses([{ subnet: 'fd00:1::/64', first: 'fd00:1::100', last: 'fd00:1::1ff' }, { subnet: 'fd00:2::/64', first: 'fd00:2::1', last: 'fd00:2::1' }]), 257);
  assert.equal(countPool6Addresses([{ subnet: 'fd00:1::/64', first: 'fd00:1::', last: 'fd00:1::ffff:ffff:ffff:ffff' }]), Number.MAX_SAFE_INTEGER);
});

const transferCases: Record<string, { map: typeof mapHttpStatus; stats: unknown; listen?: string; rate?: number; want: TransferServiceStatus | undefined }> = {
  'http: in flight = active, completed = 2xx/3xx, failed = aborted + errors': {
    map: mapHttpStatus, stats: HTTP_STATS, listen: '172.22.0.1:8081', rate: 12_500_000,
    want: { healthy: true, transfersInFlight: 2, completed: 235, failed: 3, listen: '172.22.0.1:8081', bytesPerSecond: 12_500_000 },
  },
  'http: render errors are counted and noted': {
    map: mapHttpStatus, stats: { ...HTTP_STATS, errors: 4, byStatus: { '500': 3, '503': 1 } },
    want: { healthy: true, transfersInFlight: 2, completed: 0, failed: 7, message: '4 boot lookups or renderings failed' },
  },
  'http: garbage counters read as zero': {
    map: mapHttpStatus, stats: { active: -1, byStatus: 'x', aborted: Number.NaN },
    want: { healthy: true, transfersInFlight: 0, completed: 0, failed: 0 },
  },
  'tftp: transfers from TftpServerStats': {
    map: mapTftpStatus, stats: TFTP_STATS, listen: '172.22.0.1:69',
    want: { healthy: true, transfersInFlight: 4, completed: 118, failed: 2, listen: '172.22.0.1:69' },
  },
  'tftp: drops at the transfer limit are noted': {
    map: mapTftpStatus, stats: { ...TFTP_STATS, busyDrops: 7 },
    want: { healthy: true, transfersInFlight: 4, completed: 118, failed: 2, message: '7 requests dropped at the transfer limit' },
  },
  'tftp: not running': { map: mapTftpStatus, stats: undefined, want: undefined },
};
for (const [name, c] of Object.entries(transferCases)) {
  test(`transfer mapping: ${name}`, () => {
    assert.deepEqual(c.map(c.stats, c.listen, c.rate), c.want);
  });
}

const poolCases: Record<string, { ranges: { first: string; last: string }[]; want: number }> = {
  'one /24 range': { ranges: [{ first: '172.22.0.10', last: '172.22.0.109' }], want: 100 },
  'two ranges across an octet': { ranges: [{ first: '10.0.0.250', last: '10.0.1.4' }, { first: '10.1.0.1', last: '10.1.0.1' }], want: 12 },
  'reversed and malformed ranges count nothing': { ranges: [{ first: '10.0.0.9', last: '10.0.0.1' }, { first: '10.0.0.300', last: '10.0.1.1' }], want: 0 },
};
for (const [name, c] of Object.entries(poolCases)) {
  test(`countPoolAddresses: ${name}`, () => {
    assert.equal(countPoolAddresses(c.ranges), c.want);
  });
}

const rateCases: Record<string, { previous: { bytes: number; atMs: number } | undefined; current: { bytes: number; atMs: number }; want: number | undefined }> = {
  'bytes over two seconds': { previous: { bytes: 1000, atMs: T0 }, current: { bytes: 21_000, atMs: T0 + 2000 }, want: 10_000 },
  'first sample': { previous: undefined, current: { bytes: 5, atMs: T0 }, want: undefined },
  'counter reset (service restarted)': { previous: { bytes: 9000, atMs: T0 }, current: { bytes: 10, atMs: T0 + 1000 }, want: undefined },
  'clock went back': { previous: { bytes: 0, atMs: T0 }, current: { bytes: 10, atMs: T0 - 1 }, want: undefined },
};
for (const [name, c] of Object.entries(rateCases)) {
  test(`rateBetween: ${name}`, () => {
    assert.equal(rateBetween(c.previous, c.current), c.want);
  });
}

function entry(checkedAt: number, error?: { code: string | undefined; message: string }): PowerSweepEntry {
  return error === undefined
    ? { poweredOn: true, state: 'on', checkedAt, durationMs: 40, error: undefined }
    : { poweredOn: undefined, state: undefined, checkedAt, durationMs: 5000, error };
}

test('mapBmcReachability: labels errors by code, strips credentials, skips unqueried hosts, sorts by host', () => {
  const seen = new Map<string, { reachable: boolean; sinceMs: number }>();
  const observations: BmcObservation[] = [
    { host: 'node-2', address: 'redfish+https://root:calvin@10.0.0.12/redfish/v1/Systems/1', entry: entry(T0, { code: 'RACKSIDE_ERR_BMC_AUTH', message: 'HTTP 401 from 10.0.0.12' }) },
    { host: 'node-0', address: 'ipmi://10.0.0.10', entry: entry(T0) },
    { host: 'node-1', address: 'ipmi://10.0.0.11', entry: entry(T0, { code: 'RACKSIDE_ERR_BMC_UNREACHABLE', message: 'connect ECONNREFUSED 10.0.0.11:623' }) },
    { host: 'node-3', address: 'ipmi://10.0.0.13', entry: entry(T0, { code: undefined, message: 'driver factory threw' }) },
    { host: 'node-4', address: 'ipmi://10.0.0.14', entry: undefined },
  ];
  assert.deepEqual(mapBmcReachability(observations, seen), [
    { host: 'node-0', address: 'ipmi://10.0.0.10', reachable: true, since: '2026-03-01T10:00:00.000Z' },
    { host: 'node-1', address: 'ipmi://10.0.0.11', reachable: false, since: '2026-03-01T10:00:00.000Z', lastError: 'unreachable: connect ECONNREFUSED 10.0.0.11:623' },
    { host: 'node-2', address: 'redfish+https://10.0.0.12/redfish/v1/Systems/1', reachable: false, since: '2026-03-01T10:00:00.000Z', lastError: 'credentials rejected: HTTP 401 from 10.0.0.12' },
    { host: 'node-3', address: 'ipmi://10.0.0.13', reachable: false, since: '2026-03-01T10:00:00.000Z', lastError: 'driver factory threw' },
  ]);
});

test('mapBmcReachability: since stays at the first sweep of the current reachability and moves on a change; gone hosts are forgotten', () => {
  const seen = new Map<string, { reachable: boolean; sinceMs: number }>();
  const down = { code: 'RACKSIDE_ERR_BMC_TIMEOUT', message: 'no answer in 5 s' };
  mapBmcReachability([{ host: 'a', address: 'ipmi://a', entry: entry(T0, down) }, { host: 'b', address: 'ipmi://b', entry: entry(T0) }], seen);
  const second = mapBmcReachability([{ host: 'a', address: 'ipmi://a', entry: entry(T0 + 60_000, down) }], seen);
  assert.equal(second[0]?.since, '2026-03-01T10:00:00.000Z', 'still down since the first failed sweep');
  assert.equal(second[0].lastError, 'timed out: no answer in 5 s');
  assert.equal(seen.has('b'), false, 'a host no longer listed is forgotten');
  const third = mapBmcReachability([{ host: 'a', address: 'ipmi://a', entry: entry(T0 + 120_000) }], seen);
  assert.deepEqual(third, [{ host: 'a', address: 'ipmi://a', reachable: true, since: '2026-03-01T10:02:00.000Z' }]);
});

const userInfoCases: Record<string, [string, string]> = {
  'user and password': ['idrac-virtualmedia://root:calvin@10.0.0.5/redfish/v1/Systems/System.Embedded.1', 'idrac-virtualmedia://10.0.0.5/redfish/v1/Systems/System.Embedded.1'],
  'none': ['ipmi://10.0.0.5:623', 'ipmi://10.0.0.5:623'],
  'bare host': ['10.0.0.5', '10.0.0.5'],
};
for (const [name, [input, want]] of Object.entries(userInfoCases)) {
  test(`stripUserInfo: ${name}`, () => {
    assert.equal(stripUserInfo(input), want);
  });
}

test('mapImageDownloads: phases to page states, URLs without credentials or signatures, unknown totals left out', () => {
  const downloads: ImageDownloadInput[] = [
    { url: 'https://user:pw@images.example/ubuntu-24.04.qcow2?X-Amz-Signature=abc#x', phase: 'download', bytes: 600_000_000, totalBytes: 2_400_000_000 },
    { url: 'http://172.22.0.1/images/centos.qcow2', phase: 'convert', bytes: 0, totalBytes: 900_000_000 },
    { url: 'http://172.22.0.1/images/centos.raw', phase: 'hash', bytes: 0, totalBytes: null },
    { url: 'http://172.22.0.1/images/fedora.qcow2', phase: 'failed', bytes: 12, totalBytes: 0, error: 'checksum mismatch' },
    { url: 'not a url', phase: 'queued', bytes: 0, totalBytes: null },
    { url: 'http://172.22.0.1/images/done.img', phase: 'done', bytes: 10, totalBytes: 10 },
  ];
  assert.deepEqual(mapImageDownloads(downloads), [
    { url: 'https://images.example/ubuntu-24.04.qcow2', state: 'downloading', bytesDone: 600_000_000, bytesTotal: 2_400_000_000 },
    { url: 'http://172.22.0.1/images/centos.qcow2', state: 'verifying', bytesDone: 0, bytesTotal: 900_000_000 },
    { url: 'http://172.22.0.1/images/centos.raw', state: 'verifying', bytesDone: 0 },
    { url: 'http://172.22.0.1/images/fedora.qcow2', state: 'failed', bytesDone: 12, error: 'checksum mismatch' },
    { url: '(not a URL)', state: 'queued', bytesDone: 0 },
    { url: 'http://172.22.0.1/images/done.img', state: 'done', bytesDone: 10, bytesTotal: 10 },
  ]);
});

function tunnel(overrides: Partial<TunnelStatus>): TunnelStatus {
  return { state: 'connected', since: '2026-03-01T09:00:00.000Z', remotePort: 2201, reconnects: 0, bastion: 'bastion.example:22', bastionFingerprint: 'SHA256:abc', ...overrides };
}

const SERVER = { address: '0.0.0.0', port: 2222, fingerprint: 'SHA256:host' };

const sshCases: Record<string, { source: SshSourceStatus; want: ReturnType<typeof mapSshStatus> }> = {
  'server and connected tunnel': {
    source: { server: SERVER, tunnel: tunnel({}), sessions: 2 },
    want: { server: { listen: '0.0.0.0:2222', sessions: 2 }, tunnel: { bastion: 'bastion.example:22', state: 'connected', since: '2026-03-01T09:00:00.000Z' } },
  },
  'backoff reads as down, with the error': {
    source: { server: { ...SERVER, address: '::' }, tunnel: tunnel({ state: 'backoff', lastError: 'host key mismatch', nextAttemptAt: '2026-03-01T10:01:00.000Z', reconnects: 4 }) },
    want: { server: { listen: '[::]:2222', sessions: 0 }, tunnel: { bastion: 'bastion.example:22', state: 'down', since: '2026-03-01T09:00:00.000Z', lastError: 'host key mismatch' } },
  },
  'server without a tunnel (disabledTunnelStatus)': {
    source: { server: SERVER, tunnel: { state: 'disabled', since: '2026-03-01T09:00:00.000Z', remotePort: null, reconnects: 0 } },
    want: { server: { listen: '0.0.0.0:2222', sessions: 0 } },
  },
  'ssh not configured at all': {
    source: { server: null, tunnel: { state: 'disabled', since: '2026-03-01T09:00:00.000Z', remotePort: null, reconnects: 0 } },
    want: undefined,
  },
  'before remote access started (both null)': { source: { server: null, tunnel: null }, want: undefined },
};
for (const [name, c] of Object.entries(sshCases)) {
  test(`mapSshStatus: ${name}`, () => {
    assert.deepEqual(mapSshStatus(c.source), c.want);
  });
}

test('createStatusReporter: no sources → an empty report (every panel "not configured")', async () => {
  const report = await createStatusReporter({ nowMs: () => T0 })();
  assert.deepEqual(report, {});
});

test('createStatusReporter: all sections from realistic sources; throughput between calls a second or more apart', async () => {
  let now = T0;
  let httpBytes = 1_000_000_000;
  let tftpBytes = 100_000_000;
  const reporter = createStatusReporter({
    nowMs: () => now,
    boot: () => ({ http: { ...HTTP_STATS, bytes: httpBytes }, dhcp: dhcpStats(), recorder: { recorded: 900, suppressed: 0, overflowed: 0, failed: 0, pending: 0 }, tftp: { ...TFTP_STATS, bytesSent: tftpBytes } }),
    bootConfig: FULL,
    bmc: () => Promise.resolve([{ host: 'node-0', address: 'ipmi://10.0.0.10', entry: entry(T0 - 5000) }]),
    images: () => [{ url: 'http://172.22.0.1/a.qcow2', phase: 'download', bytes: 1, totalBytes: 2 }],
    ssh: () => ({ server: SERVER, tunnel: null }),
  });
  const first: AgentStatusReport = await reporter();
  assert.equal(first.bootServices?.http?.bytesPerSecond, undefined, 'no rate before a second sample');
  assert.deepEqual(first.bootServices?.dhcp, { mode: 'full', healthy: true, message: 'on eno2 (172.22.0.1)', leasesUsed: 37, leasesFree: 63 });
  assert.equal(first.bootServices.tftp!.transfersInFlight, 4);
  assert.deepEqual(first.bmc, [{ host: 'node-0', address: 'ipmi://10.0.0.10', reachable: true, since: '2026-03-01T09:59:55.000Z' }]);
  assert.equal(first.images?.[0]?.state, 'downloading');
  assert.deepEqual(first.ssh, { server: { listen: '0.0.0.0:2222', sessions: 0 } });

  now += 4000;
  httpBytes += 200_000_000;
  tftpBytes += 4_000_000;
  const second = await reporter();
  assert.equal(second.bootServices?.http?.bytesPerSecond, 50_000_000);
  assert.equal(second.bootServices.tftp!.bytesPerSecond, 1_000_000);

  now += 200;
  httpBytes += 1;
  const third = await reporter();
  assert.equal(third.bootServices?.http?.bytesPerSecond, 50_000_000, 'a call within a second keeps the previous rate');
});

test('createStatusReporter: a throwing source is reported and only its section is left out', async () => {
  const errors: string[] = [];
  const reporter = createStatusReporter({
    nowMs: () => T0,
    boot: () => { throw new Error('stats exploded'); },
    bmc: () => Promise.reject(new Error('store closed')),
    ssh: () => ({ server: SERVER, tunnel: tunnel({ state: 'connecting' }) }),
    onError: (section, err) => { errors.push(`${section}: ${err instanceof Error ? err.message : String(err)}`); },
  });
  const report = await reporter();
  assert.deepEqual(errors, ['bootServices: stats exploded', 'bmc: store closed']);
  assert.equal(report.bootServices, undefined);
  assert.equal(report.bmc, undefined);
  assert.equal(report.ssh?.tunnel?.state, 'connecting');
});
