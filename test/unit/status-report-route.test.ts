/**
 * `GET /api/v1/status` served the way agent/main.ts wires it — `statusReportHandler` (agent/web/ui)
 * over {@link createStatusReporter} on the real management app — answers the report as JSON,
 * and a section whose source throws is left out rather than failing the whole document.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countPoolAddresses, createStatusReporter } from '../../agent/status-report.js';
import { statusReportHandler, type AgentStatusReport } from '../../agent/web/ui/index.js';
import { FakeBackend, startFakeApi } from '../helpers/fake-backend.js';

test('GET /api/v1/status answers the mapped report; a failing source only drops its section', async () => {
  const warnings: string[] = [];
  const reporter = createStatusReporter({
    nowMs: () => Date.parse('2026-03-01T10:00:00.000Z'),
    boot: () => ({
      http: { requests: 10, bytes: 5000, active: 1, byStatus: { '200': 9 }, generated: 4, probes: 0, refused: 0, aborted: 0, errors: 0 },
      dhcp: { received: { '67': 20 }, replies: { offer: 5, ack: 5 }, ignored: {}, dropped: {}, lookupErrors: 0, released: 0, declined: 0, hardwareUnicast: 0, hardwareUnicastFallbacks: 0, inFlight: 0, leases: { records: 5, writes: 5, writeErrors: 0, coalesced: 0, pending: 0, memoryOnly: 0 } },
      recorder: { recorded: 30, suppressed: 0, overflowed: 0, failed: 0, pending: 0 },
    }),
    bootConfig: { dhcpMode: 'full', dhcpInterface: 'eno2', dhcpAddress: '172.22.0.1', dhcpPoolAddresses: countPoolAddresses([{ first: '172.22.0.10', last: '172.22.0.59' }]), httpListen: '0.0.0.0:8081' },
    bmc: () => { throw new Error('the sweep is stopped'); },
    ssh: () => ({ server: { address: '0.0.0.0', port: 2222, fingerprint: 'SHA256:x' }, tunnel: null }),
    onError: (section, err) => { warnings.push(`${section}: ${err instanceof Error ? err.message : String(err)}`); },
  });
  const api = await startFakeApi(new FakeBackend(), {
    extraRoutes: (router) => { router.get('/status', statusReportHandler(reporter)); },
  });
  try {
    const response = await fetch(`${api.baseUrl}/api/v1/status`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const report = (await response.json()) as AgentStatusReport;
    assert.deepEqual(report, {
      bootServices: {
        dhcp: { mode: 'full', healthy: true, message: 'on eno2 (172.22.0.1)', leasesUsed: 5, leasesFree: 45 },
        http: { healthy: true, transfersInFlight: 1, completed: 9, failed: 0, listen: '0.0.0.0:8081' },
      },
      ssh: { server: { listen: '0.0.0.0:2222', sessions: 0 } },
    });
    assert.deepEqual(warnings, ['bmc: the sweep is stopped']);
  } finally {
    await api.close();
  }
});
