/** /metrics of an agent running boot services carries the boot-service families with live numbers. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { hostManifests } from '../helpers/host-harness.js';
import { startLocalAgent, waitFor } from '../helpers/local-agent.js';

test('boot HTTP requests show up in /metrics by status, with bytes', async (t) => {
  const dir = await scratchDir('metrics');
  t.after(() => removeDir(dir));
  const { agent, httpPort } = await startLocalAgent(t, dir);
  const script = await fetch(`http://127.0.0.1:${httpPort}/boot/52-54-00-00-00-01.ipxe`);
  assert.equal(script.status, 200);
  assert.match(await script.text(), /^#!ipxe/);
  assert.equal((await fetch(`http://127.0.0.1:${httpPort}/../etc/passwd`)).status >= 400, true);
  const metrics = await (await fetch(`${agent.managementUrl}/metrics`)).text();
  const ok = /^rackside_http_requests_total\{status="200"\} (\d+)$/m.exec(metrics);
  assert.ok(ok !== null && Number(ok[1]) >= 1, metrics.split('\n').filter((l) => l.startsWith('rackside_http')).join('\n'));
  assert.match(metrics, /^rackside_http_sent_bytes_total [1-9]\d*$/m);
  assert.match(metrics, /^# TYPE rackside_dhcp_received_total counter$/m);
  assert.match(metrics, /^rackside_http_transfers_in_flight 0$/m);
  assert.match(metrics, /^rackside_boot_requests_deferred_total \d+$/m, 'the turn budget is wired into the boot services');
});

test('BMC calls show up in /metrics by driver, operation and outcome, with latency', async (t) => {
  const dir = await scratchDir('metrics-bmc');
  t.after(() => removeDir(dir));
  const { agent, api } = await startLocalAgent(t, dir);
  const [secret, host] = hostManifests('metrics-node0') as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = 'fake://metrics-node0-bmc';
  const applied = await fetch(`${api}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([secret, host]) });
  assert.equal(applied.status, 200, await applied.text());
  const series = await waitFor('a BMC call in /metrics', async () => {
    const metrics = await (await fetch(`${agent.managementUrl}/metrics`)).text();
    const lines = metrics.split('\n').filter((l) => l.startsWith('rackside_bmc_call_duration_seconds_count{'));
    return lines.some((l) => l.includes('driver="fake"') && l.includes('outcome="ok"')) ? { metrics, lines } : undefined;
  });
  assert.match(series.metrics, /^# TYPE rackside_bmc_call_duration_seconds histogram$/m);
  for (const line of series.lines) assert.match(line, /^rackside_bmc_call_duration_seconds_count\{driver="fake",operation="[a-zA-Z]+\.[a-zA-Z]+",outcome="(ok|RACKSIDE_ERR_BMC_[A-Z_]+|error)"\} [1-9]\d*$/);
  assert.match(series.metrics, /^rackside_bmc_call_duration_seconds_bucket\{le="\+Inf",driver="fake",operation="[^"]+",outcome="ok"\} [1-9]/m);
});
