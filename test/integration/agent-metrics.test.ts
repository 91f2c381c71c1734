/** /metrics of an agent running boot services carries the boot-service families with live numbers. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { startLocalAgent } from '../helpers/local-agent.js';

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
});
