/**
 * Fault injection: the wall clock of the agent process jumps — forward 1 h, back 1 h, forward
 * 1 day, back 1 day — while its monotonic clock runs on (libfaketime with a timestamp file the
 * test rewrites; the machine's clock is never touched). The real agent (local provisioner, fake
 * BMC, boot HTTP on loopback) is inspecting a host whose simulated ramdisk holds the inspect
 * command when the jumps happen.
 *
 * Defined behaviour: every jump is reported once as a `ClockJumped` Warning naming its direction
 * and size; nothing measured as a duration moves — the inspection neither times out nor restarts
 * (one `InspectionStarted`, the same boot token), the ramdisk's token stays valid (no 401, no
 * `RamdiskTokenRejected`); timers keep firing (the reconciler finishes the inspection once the
 * inventory arrives); event times and the HTTP `Date` follow the wall clock, jumps included.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { CLI, removeDir, scratchDir } from '../helpers/agent-process.js';
import { hostManifests } from '../helpers/host-harness.js';
import { freePort, waitFor } from '../helpers/local-agent.js';
import { fakeClock } from './faketime.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Agent {
  api: string;
  boot: string;
  output(): string;
}

/** Starts `rackside agent` (local provisioner) as a child with `env` added; SIGTERM (then SIGKILL) after the test. */
async function startAgent(t: TestContext, dir: string, env: Readonly<Record<string, string>>): Promise<Agent> {
  const httpPort = await freePort();
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(configPath, [
    'agent:', '  id: clock-rack', `  stateDir: ${join(dir, 'state')}`,
    'provisioner: local',
    'management:', '  listen: 127.0.0.1:0',
    'http:', `  listen: 127.0.0.1:${httpPort}`,
    'images:', `  cacheDir: ${join(dir, 'cache')}`,
    'reconcile:', '  timeScale: 0.01',
    'log:', '  level: info',
  ].join('\n'));
  const child = spawn(process.execPath, [CLI, 'agent', '--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve(); }));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  });
  const api = await waitFor('the agent to be ready', () => {
    if (child.exitCode !== null) throw new Error(`agent exited with ${child.exitCode}:\n${output}`);
    return Promise.resolve(/"managementUrl":"([^"]+)"/.exec(output)?.[1]);
  }, 30_000);
  return { api, boot: `http://127.0.0.1:${httpPort}`, output: () => output };
}

interface Event { time: string; reason: string; type: string; message: string; host?: string }

test('wall-clock jumps of ±1 h and ±1 day during an inspection: each is reported, nothing times out, restarts or loses its token, timers keep firing', async (t) => {
  const dir = await scratchDir('fault-clock');
  t.after(() => removeDir(dir));
  const clock = await fakeClock(t, dir);
  if (clock === undefined) return;
  const agent = await startAgent(t, dir, clock.env);
  const { api, boot } = agent;
  const events = async (): Promise<Event[]> => ((await (await fetch(`${api}/api/v1/events?limit=500`)).json()) as { items: Event[] }).items;
  const host = async (): Promise<{ state: string; errorMessage: string; errorType: string }> => {
    const body = (await (await fetch(`${api}/api/v1/hosts/c0`)).json()) as { status: { provisioning: { state: string }; errorMessage: string; errorType: string } };
    return { state: body.status.provisioning.state, errorMessage: body.status.errorMessage, errorType: body.status.errorType };
  };
  /** The agent's wall clock as its HTTP `Date` header says (1 s resolution). */
  const agentWallMs = async (): Promise<number> => Date.parse((await fetch(`${api}/api/v1/hosts`)).headers.get('date') ?? '');

  const [secret, bmh] = hostManifests('c0') as [unknown, { spec: { bmc: { address: string } } }];
  bmh.spec.bmc.address = 'fake://c0-bmc';
  const applied = await fetch(`${api}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([secret, bmh]) });
  assert.equal(applied.status, 200, await applied.text());
  const scriptToken = async (): Promise<string | undefined> => /rackside\.token=([A-Za-z0-9_-]+)/.exec(await (await fetch(`${boot}/boot/00-5c-52-31-3a-9c.ipxe`)).text())?.[1];
  // The host reads its boot script when it boots, i.e. once the inspection started (a token is per boot).
  await waitFor('InspectionStarted', async () => ((await events()).some((e) => e.reason === 'InspectionStarted') ? true : undefined));
  const token = await waitFor('the ramdisk script', scriptToken);
  const heartbeat = async (last: string | null): Promise<Response> => fetch(`${boot}/ramdisk/v1/heartbeat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ version: 'test', boot_mac: '00:5c:52:31:3a:9c', ip: '192.0.2.77', uptime_seconds: 5, last_command_id: last }),
  });
  const command = await waitFor('the inspect command', async () => {
    const res = await heartbeat(null);
    const text = await res.text();
    return text.includes('command=inspect') ? text : undefined;
  });
  const commandId = /command_id=(\S+)/.exec(command)?.[1] ?? '';

  const jumps: [number, RegExp][] = [
    [HOUR, /jumped forward by 1 h\b/],
    [0, /jumped back by 1 h\b/],
    [DAY, /jumped forward by 1 d\b/],
    [0, /jumped back by 1 d\b/],
  ];
  let reported = 0;
  for (const [offsetMs, says] of jumps) {
    await clock.set(offsetMs);
    const seen = await waitFor(`ClockJumped ${String(says)}`, async () => {
      const jumped = (await events()).filter((e) => e.reason === 'ClockJumped');
      return jumped.length > reported ? jumped : undefined;
    }, 15_000);
    reported = seen.length;
    const latest = seen.find((e) => says.test(e.message)) ?? assert.fail(`no ClockJumped ${String(says)} in ${seen.map((e) => e.message).join(' | ')}`);
    assert.equal(latest.type, 'Warning');
    t.diagnostic(`${latest.time} ${latest.message}`);
    assert.ok(Math.abs(Date.parse(latest.time) - (Date.now() + offsetMs)) < 30_000, `the event time follows the wall clock: ${latest.time}`);

    // Give the reconciler several polls on the jumped clock, then check nothing moved.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const agentNow = await agentWallMs(); // Node caches the Date header for up to 1 s
    assert.ok(Math.abs(agentNow - (Date.now() + offsetMs)) < 5_000, `the agent process sees the faked wall clock: ${new Date(agentNow).toISOString()}`);
    const beat = await heartbeat(commandId);
    assert.equal(beat.status, 200, `the ramdisk's token is still valid after the jump: ${await beat.text()}`);
    const now = await host();
    assert.equal(now.state, 'inspecting', `still inspecting after the jump: ${now.errorType} ${now.errorMessage}`);
    assert.equal(now.errorMessage, '');
    assert.equal(await scriptToken(), token, 'the host was not booted again (same token)');
  }
  assert.equal(reported, jumps.length, 'one ClockJumped per jump');

  const inventory = {
    cpu: { model_name: 'Test CPU', count: 4, architecture: 'x86_64', frequency: '2000' },
    memory: { physical_mb: 2048 },
    disks: [{ name: '/dev/vda', size: 8589934592, rotational: false, serial: 'VDA1' }],
    interfaces: [{ name: 'eth0', mac_address: '00:5c:52:31:3a:9c', ipv4_address: '192.0.2.77', pxe_enabled: true }],
  };
  const posted = await fetch(`${boot}/ramdisk/v1/inventory`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ command_id: commandId, inventory }),
  });
  assert.equal(posted.status, 200);
  await waitFor('available after the inspection', async () => ((await host()).state === 'available' ? true : undefined), 30_000);

  const all = await events();
  const reasons = all.filter((e) => e.host === 'c0').map((e) => e.reason);
  assert.equal(reasons.filter((r) => r === 'InspectionStarted').length, 1, `one inspection, never restarted: ${reasons.join(',')}`);
  assert.ok(!all.some((e) => e.reason === 'RamdiskTokenRejected'), 'no token was refused');
  assert.ok(!all.some((e) => /never called back|timed out/.test(e.message)), 'nothing timed out');
  assert.doesNotMatch(agent.output(), /"level":(50|60)/, 'no error logged');
});
