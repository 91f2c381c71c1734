// The Redfish driver against the virtual Redfish BMC over HTTPS with a self-signed certificate:
// TLS verification, basic and session auth (re-login after the BMC drops the session, logout on
// close), one request at a time, and every injected fault ending in a BmcError with a stable
// code and the BMC address — never an unhandled rejection, never the credentials in a message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { BmcErrorCode, DriverRegistry, isBmcError, parseBmcAddress, waitForPowerState, type BmcDriver } from '../../drivers/index.js';
import { RedfishTlsError } from '../../drivers/redfish/http-errors.js';
import { createRedfishDriver, createRedfishDriverFactory, type RedfishDriverOptions } from '../../drivers/redfish/redfish-driver.js';
import { softPowerOff } from '../../drivers/power-helpers.js';
import type { BmcErrorCodeValue } from '../../drivers/errors.js';
import type { MemoryHostBackend } from '../lab/redfish/backend.js';
import type { VirtualBmcFault } from '../lab/redfish/state.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmc, type VirtualRedfishBmcOptions } from '../lab/redfish/virtual-bmc.js';

const PASSWORD = 'S3cret-Pa55word!';
const CREDS = { username: 'admin', password: PASSWORD };
const BASIC = Buffer.from(`admin:${PASSWORD}`).toString('base64');
const skip = spawnSync('openssl', ['version']).status === 0 ? undefined : 'openssl CLI not installed (needed for the self-signed certificate)';
if (skip !== undefined && process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') throw new Error(skip);

interface Rig {
  readonly bmc: VirtualRedfishBmc;
  readonly driver: BmcDriver;
  readonly address: string;
  done(): Promise<void>;
}

async function rig(bmcOptions: VirtualRedfishBmcOptions = {}, driverOptions: RedfishDriverOptions = {}, path = ''): Promise<Rig> {
  const bmc = await startVirtualRedfishBmc({ password: PASSWORD, ...bmcOptions });
  const registry = new DriverRegistry();
  registry.register('redfish', createRedfishDriverFactory({ retryDelayMs: 5, taskPollMs: 5, ...driverOptions }));
  const address = `redfish://${bmc.host}${path}`;
  const driver = registry.create(address, CREDS, { disableCertificateVerification: true, timeoutMs: 2000, ...driverOptions });
  return { bmc, driver, address, done: async () => { await driver.close(); await bmc.stop(); } };
}

/** Asserts a BmcError with `code`, naming the address, without credentials anywhere in it. */
async function failsWith(promise: Promise<unknown>, code: BmcErrorCodeValue, address: string, pattern?: RegExp): Promise<Error> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof Error, 'the call rejected');
  assert.ok(isBmcError(caught, code), `expected ${code}, got ${(caught as { code?: string }).code ?? '?'}: ${caught.message}`);
  assert.ok(caught.message.includes(address), `message names the BMC: ${caught.message}`);
  if (pattern !== undefined) assert.match(caught.message, pattern);
  const everything = `${caught.message}\n${inspect(caught, { depth: 8 })}`;
  assert.ok(!everything.includes(PASSWORD) && !everything.includes(BASIC), 'no credentials in the error');
  return caught;
}

test('TLS verification on: a clear error naming the host and how to turn it off; off: works', { skip }, async () => {
  const r = await rig();
  try {
    const registry = new DriverRegistry();
    registry.register('redfish', createRedfishDriverFactory());
    const strict = registry.create(r.address, CREDS, { timeoutMs: 2000 });
    const err = await failsWith(strict.power.getPowerState(), BmcErrorCode.unreachable, r.address, /disableCertificateVerification/);
    assert.ok(err instanceof RedfishTlsError);
    assert.equal(err.tlsCode, 'DEPTH_ZERO_SELF_SIGNED_CERT');
    assert.ok(err.message.includes(r.bmc.host), 'names the host');
    await strict.close();
    const pinned = createRedfishDriver(parseBmcAddress(r.address), CREDS, { ca: r.bmc.certificate ?? '', timeoutMs: 2000 });
    assert.equal(await pinned.power?.getPowerState(), 'off', 'trusting the pinned certificate works with verification on');
    await pinned.close?.();
    assert.equal(await r.driver.power.getPowerState(), 'off');
  } finally {
    await r.done();
  }
});

test('session auth: one login, token reused, re-login once after the BMC drops the session, logout on close', { skip }, async () => {
  const r = await rig();
  try {
    await r.driver.power.getPowerState();
    await r.driver.power.getPowerState();
    assert.equal(r.bmc.state.sessions.size, 1);
    r.bmc.state.dropSessions();
    assert.equal(await r.driver.power.getPowerState(), 'off');
    const logins = r.bmc.state.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/Sessions'));
    assert.equal(logins.length, 2);
    assert.ok(r.bmc.state.requests.filter((q) => q.path !== '/redfish/v1' && !q.path.endsWith('/Sessions')).every((q) => q.authorization === 'token'));
    await r.driver.close();
    assert.equal(r.bmc.state.sessions.size, 0, 'the session was deleted on close');
    await failsWith(r.driver.power.getPowerState(), BmcErrorCode.protocol, r.address, /closed/);
  } finally {
    await r.done();
  }
});

test('basic auth: without a SessionService (auto) and when forced; wrong password → auth error', { skip }, async () => {
  const r = await rig({ knobs: { sessions: false } });
  try {
    assert.equal(await r.driver.power.getPowerState(), 'off');
    assert.ok(r.bmc.state.requests.some((q) => q.authorization === 'basic'));
    assert.equal(r.bmc.state.requests.filter((q) => q.method === 'POST').length, 0);
  } finally {
    await r.done();
  }
  for (const auth of ['basic', 'session'] as const) {
    const bad = await startVirtualRedfishBmc({ password: 'another-password' });
    const address = `redfish://${bad.host}`;
    const registry = new DriverRegistry();
    registry.register('redfish', createRedfishDriverFactory({ auth }));
    const driver = registry.create(address, CREDS, { disableCertificateVerification: true });
    await failsWith(driver.power.getPowerState(), BmcErrorCode.auth, address, /rejected the credentials/);
    await driver.close();
    await bad.stop();
  }
});

test('one request at a time per BMC, even with many concurrent calls', { skip }, async () => {
  const r = await rig({ knobs: {} });
  try {
    r.bmc.state.inject({ kind: 'slow', delayMs: 5, match: '/Systems/1' });
    const states = await Promise.all(Array.from({ length: 12 }, () => r.driver.power.getPowerState()));
    assert.deepEqual(new Set(states), new Set(['off']));
    assert.equal(r.bmc.state.maxInFlight, 1);
  } finally {
    await r.done();
  }
});

test('delayed PowerState: accepted at once, reported later; waitForPowerState polls until it changes', { skip }, async () => {
  const r = await rig({ knobs: { powerDelayMs: 150 } });
  try {
    await r.driver.power.setPower('on');
    assert.equal(await r.driver.power.getPowerState(), 'off', 'the BMC still reports the old state');
    await waitForPowerState(r.driver.power, 'on', { timeoutMs: 3000, pollMs: 20, address: r.address });
    await r.driver.power.setPower('off');
    await failsWith(waitForPowerState(r.driver.power, 'off', { timeoutMs: 30, pollMs: 10, address: r.address }), BmcErrorCode.timeout, r.address, /still on/);
  } finally {
    await r.done();
  }
});

test('soft power off falls back to ForceOff when the OS ignores the ACPI request', { skip }, async () => {
  const r = await rig();
  try {
    await r.driver.power.setPower('on');
    const backend = r.bmc.backends.get('1') as MemoryHostBackend;
    backend.ignoreShutdown = true;
    assert.equal(await softPowerOff(r.driver.power, { graceMs: 100, pollMs: 10, timeoutMs: 2000 }), 'hard');
    assert.equal(backend.power, 'Off');
    const resets = r.bmc.state.requests.filter((q) => q.path.endsWith('ComputerSystem.Reset')).length;
    assert.equal(resets, 3, 'On, GracefulShutdown, ForceOff');
  } finally {
    await r.done();
  }
});

const faults: Record<string, { fault: VirtualBmcFault; code: BmcErrorCodeValue; pattern: RegExp; requests?: number; options?: RedfishDriverOptions }> = {
  '503 storm → busy after bounded retries': { fault: { kind: 'status', status: 503, match: '/Systems/1' }, code: BmcErrorCode.busy, pattern: /HTTP 503/, requests: 3 },
  '500 → protocol, not retried': { fault: { kind: 'status', status: 500, match: '/Systems/1' }, code: BmcErrorCode.protocol, pattern: /HTTP 500/, requests: 1 },
  'hanging answer → timeout': { fault: { kind: 'hang', match: '/Systems/1' }, code: BmcErrorCode.timeout, pattern: /within 300 ms/, options: { timeoutMs: 300 } },
  'HTML error page → protocol, with its title': { fault: { kind: 'html', match: '/Systems/1' }, code: BmcErrorCode.protocol, pattern: /HTML page "500 Internal Server Error"/ },
  'HTML with 200 → protocol': { fault: { kind: 'html', status: 200, match: '/Systems/1' }, code: BmcErrorCode.protocol, pattern: /HTML page .* instead of JSON/ },
  'truncated JSON → protocol': { fault: { kind: 'truncated', match: '/Systems/1' }, code: BmcErrorCode.protocol, pattern: /invalid JSON/ },
  'huge chunked body → protocol': { fault: { kind: 'huge', bytes: 9 * 1024 * 1024, match: '/Systems/1' }, code: BmcErrorCode.protocol, pattern: /exceeds 8388608 bytes/ },
  'huge body with Content-Length → protocol': { fault: { kind: 'huge', bytes: 9 * 1024 * 1024, contentLength: true, match: '/Systems/1' }, code: BmcErrorCode.protocol, pattern: /exceeds/ },
  'redirect to another host → refused': { fault: { kind: 'redirect', location: 'https://203.0.113.9/redfish/v1/Systems/1', match: '/Systems/1' }, code: BmcErrorCode.protocol, pattern: /refused redirect.*203\.0\.113\.9/ },
  'connection resets → unreachable after retries': { fault: { kind: 'reset', match: '/Systems/1' }, code: BmcErrorCode.unreachable, pattern: /Systems\/1/, requests: 3 },
};

for (const [name, c] of Object.entries(faults)) {
  test(`fault: ${name}`, { skip }, async () => {
    const r = await rig({}, c.options ?? {});
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
    process.on('unhandledRejection', onUnhandled);
    try {
      r.bmc.state.inject(c.fault);
      await failsWith(r.driver.power.getPowerState(), c.code, r.address, c.pattern);
      if (c.requests !== undefined) assert.equal(r.bmc.state.requests.filter((q) => q.path === '/redfish/v1/Systems/1').length, c.requests);
      r.bmc.state.clearFaults();
      assert.equal(await r.driver.power.getPowerState(), 'off', 'the driver recovers once the BMC does');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await r.done();
    }
  });
}

test('a transient 503 and a reset connection are retried transparently for reads', { skip }, async () => {
  const r = await rig();
  try {
    r.bmc.state.inject({ kind: 'status', status: 503, retryAfterSeconds: 0, match: '/Systems/1', times: 1 });
    r.bmc.state.inject({ kind: 'reset', match: '/Systems/1', times: 1 });
    assert.equal(await r.driver.power.getPowerState(), 'off');
  } finally {
    await r.done();
  }
});

test('POST actions are not retried: a 503 on Reset is reported as busy', { skip }, async () => {
  const r = await rig();
  try {
    r.bmc.state.inject({ kind: 'status', status: 503, match: 'ComputerSystem.Reset', times: 1 });
    await failsWith(r.driver.power.setPower('on'), BmcErrorCode.busy, r.address, /POST .*Reset is busy/);
    assert.equal(r.bmc.state.requests.filter((q) => q.path.endsWith('ComputerSystem.Reset')).length, 1);
  } finally {
    await r.done();
  }
});

test('unreachable BMC → unreachable with the address', { skip }, async () => {
  const r = await rig();
  await r.done();
  const registry = new DriverRegistry();
  registry.register('redfish', createRedfishDriverFactory());
  const driver = registry.create(r.address, CREDS, { disableCertificateVerification: true });
  await failsWith(driver.power.getPowerState(), BmcErrorCode.unreachable, r.address, /ECONNREFUSED/);
  await driver.close();
});

test('ETag: PATCH sends If-Match; a 412 after a concurrent change is retried once with the fresh ETag', { skip }, async () => {
  const r = await rig({ knobs: { requireIfMatch: true } });
  try {
    r.bmc.state.inject({ kind: 'slow', delayMs: 200, method: 'PATCH', match: '/Systems/1', times: 1 });
    const setting = r.driver.bootDevice.setBootDevice('cdrom');
    await new Promise((resolve) => setTimeout(resolve, 80));
    const system = r.bmc.state.systems.get('1');
    assert.ok(system);
    system.boot = { ...system.boot, mode: 'Legacy' }; // someone else changes the System meanwhile
    await setting;
    assert.deepEqual(await r.driver.bootDevice.getBootDevice(), { device: 'cdrom', persistent: false, mode: 'legacy' });
    const patches = r.bmc.state.requests.filter((q) => q.method === 'PATCH');
    assert.equal(patches.length, 2);
    assert.ok(patches.every((q) => q.ifMatch?.startsWith('"') === true));
    assert.notEqual(patches[0]?.ifMatch, patches[1]?.ifMatch);
  } finally {
    await r.done();
  }
});

test('task monitors: 202 + Location followed to the end; a failed task reports failed', { skip }, async () => {
  const r = await rig({ knobs: { taskPolls: 3 } });
  try {
    const { taskId } = await r.driver.firmware.simpleUpdate({ imageUrl: 'https://images.example/bmc-8.1.0.bin', targets: ['BMC'] });
    const states = [];
    for (let i = 0; i < 5; i++) states.push((await r.driver.tasks.getTask(taskId)).state);
    assert.deepEqual(states, ['running', 'running', 'running', 'completed', 'completed']);
    r.bmc.state.knobs.failNextTask = true;
    const failed = await r.driver.firmware.simpleUpdate({ imageUrl: 'https://images.example/bmc-8.2.0.bin' });
    let status = await r.driver.tasks.getTask(failed.taskId);
    while (status.state === 'running') status = await r.driver.tasks.getTask(failed.taskId);
    assert.equal(status.state, 'failed');
    assert.ok(status.messages.some((m) => m.includes('image verification failed')));
    await failsWith(r.driver.tasks.getTask('/redfish/v1/TaskService/Tasks/999'), BmcErrorCode.protocol, r.address, /unknown task/);
  } finally {
    await r.done();
  }
});

test('a task that never finishes ends in a timeout error, bounded by taskTimeoutMs', { skip }, async () => {
  const r = await rig({ knobs: { taskPolls: 1_000_000 } }, { taskTimeoutMs: 150, taskPollMs: 20 });
  try {
    // The second volume waits for the first one's task monitor, which stays 202 forever.
    await failsWith(r.driver.raid.applyRaidConfig([{ level: '1' }, { level: '0' }]), BmcErrorCode.timeout, r.address, /task .*TaskMonitors.* did not finish within 150 ms/);
    assert.ok(r.bmc.state.requests.filter((q) => q.path.includes('/TaskMonitors/')).length >= 2);
  } finally {
    await r.done();
  }
});
