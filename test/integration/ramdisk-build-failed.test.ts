/**
 * A ramdisk build that cannot work — `images.ramdisk.kernel` pointed at nothing — with the
 * agent's automatic build on (agent/provisioner/local/ramdisk-builds.ts, the real `nice 10`
 * child `rackside images build`): the failure and its fix are on the agent's status (the status
 * page's boot-services report, a RamdiskBuildFailed event, `/metrics`), on the host that needed
 * the ramdisk (an inspection error; it was never booted into a 404 loop), and `rackside doctor`
 * fails with the same reason.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { startAgent } from '../../agent/main.js';
import type { BareMetalHost } from '../../agent/host/types.js';
import type { StoredEvent } from '../../agent/store/types.js';
import { CLI, removeDir, scratchDir } from '../helpers/agent-process.js';
import { hostManifests } from '../helpers/host-harness.js';
import { freePort, waitFor } from '../helpers/local-agent.js';

const REASON = 'kernel image /nonexistent/vmlinuz does not exist';

test('a failed ramdisk build: the reason and the fix on the agent, on the waiting host, and in doctor', async (t) => {
  const dir = await scratchDir('ramdisk-build-failed');
  t.after(() => removeDir(dir));
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(configPath, [
    'agent:', `  stateDir: ${join(dir, 'state')}`,
    'provisioner: local',
    'management:', '  listen: 127.0.0.1:0',
    'http:', `  listen: 127.0.0.1:${await freePort()}`,
    'images:', `  cacheDir: ${join(dir, 'cache')}`, '  ramdisk:', '    kernel: /nonexistent/vmlinuz', '    modules: /nonexistent/modules',
    'reconcile:', '  timeScale: 0.01',
    'log:', '  level: silent',
  ].join('\n'));
  const agent = await startAgent({ configPath, ramdiskBuild: 'auto' });
  t.after(() => agent.stop());
  const api = agent.managementUrl;
  const [secret, host] = hostManifests('node-0') as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = 'fake://node-0-bmc';
  const applied = await fetch(`${api}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([secret, host]) });
  assert.equal(applied.status, 200, await applied.text());

  // On the host: an inspection error with the reason and the fix.
  const failed = await waitFor('the host\'s inspection error', async () => {
    const h = (await (await fetch(`${api}/api/v1/hosts/node-0`)).json()) as BareMetalHost;
    return h.status.errorType === 'inspection error' ? h : undefined;
  }, 60_000);
  assert.match(failed.status.errorMessage, new RegExp(`^starting inspection: the amd64 ramdisk build failed: ${REASON} — fix: point images\\.ramdisk\\.kernel at an existing`));

  // On the agent: the status report, the event, the metrics.
  const status = (await (await fetch(`${api}/api/v1/status`)).json()) as { bootServices?: { ramdisk?: { state: string; message: string; fix?: string }; ramdisks?: { arch?: string; state: string }[] } };
  const ramdisk = status.bootServices?.ramdisk;
  assert.equal(ramdisk?.state, 'failed');
  assert.equal(ramdisk.message, REASON);
  assert.deepEqual(status.bootServices?.ramdisks?.map((r) => [r.arch, r.state]), [['amd64', 'failed']], 'every architecture\'s build: only the head node\'s so far');
  const events = (await (await fetch(`${api}/api/v1/events?limit=500`)).json()) as { items: StoredEvent[] };
  const warning = events.items.find((e) => e.reason === 'RamdiskBuildFailed');
  assert.equal(warning?.type, 'Warning');
  assert.ok(warning.message.includes(REASON));
  const timeline = (await (await fetch(`${api}/api/v1/hosts/node-0/timeline?limit=500`)).json()) as { items: StoredEvent[] };
  assert.ok(!timeline.items.some((e) => e.reason === 'InspectionStarted'), 'the host was not booted');
  const metrics = await (await fetch(`${api}/metrics`)).text();
  assert.match(metrics, /^rackside_ramdisk_build_phase\{phase="failed"\} 1$/m);

  // doctor: the same reason, a FAIL.
  const doctor = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile(process.execPath, [CLI, 'doctor', '--config', configPath, '-o', 'json'], { timeout: 60_000 }, (error, stdout) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, out: stdout });
    });
  });
  assert.equal(doctor.code, 1, doctor.out);
  const line = (JSON.parse(doctor.out) as { checks: { check: string; status: string; detail: string; fix: string }[] }).checks.find((c) => c.check === 'ramdisk build');
  assert.equal(line?.status, 'fail');
  assert.ok(line.detail.endsWith(`: ${REASON}`), line.detail);
  assert.equal(line.fix, ramdisk.fix);
});
