/**
 * Issue 27 at the agent level, against BMCs as they are in the field: a BMC whose power state
 * follows a request seconds later gets one request per intent and `updateHardwareState` follows
 * it within a poll; a power change the BMC never shows fails naming the timeout; a soft power-off's
 * start time is cleared by the power-on after it; permanent BMC errors (refused credentials, a
 * name that does not resolve) end registration; the host's `rackside.io/ipmi-cipher-suite`
 * annotation reaches the driver; inventory warnings become Warning events.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BmcErrorCode, DriverRegistry, type OutOfBandInventory, type PowerAction, type PowerState } from '../../../drivers/index.js';
import { BmcError, BmcHostUnresolvedError } from '../../../drivers/errors.js';
import type { DriverOptions } from '../../../drivers/registry.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { publishInventoryWarnings } from '../../../agent/provisioner/local/bmc-host-options.js';
import { checkAnnotations } from '../../../agent/host/validation-rules.js';
import type { BareMetalHostSpec } from '../../../agent/host/types.js';
import type { Provisioner } from '../../../agent/provisioner/index.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { accessData, hostData } from './host-data.js';

/** A BMC whose power follows a request `lagMs` later (restarted by every new request, as the field BMC did). */
class LaggingBmc {
  state: 'on' | 'off' = 'off';
  requests: PowerAction[] = [];
  lagMs = 300;
  /** Soft-off is ignored (a hung OS). */
  ignoreSoftOff = false;
  failWith: Error | undefined;
  options: DriverOptions | undefined;
  shownAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  setPower(action: PowerAction): void {
    this.requests.push(action);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (action === 'soft-off' && this.ignoreSoftOff) return;
    const target = action === 'on' ? 'on' : 'off';
    this.#timer = setTimeout(() => {
      this.state = target;
      this.shownAt = Date.now();
    }, this.lagMs);
  }
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }
}

function bench(t: import('node:test').TestContext, power?: { changeTimeoutMs?: number; softOffTimeoutMs?: number }): {
  bmc: LaggingBmc; factory: LocalFactory; woken: string[]; clock: { offsetMs: number }; provisioner(annotations?: Record<string, string>): Promise<Provisioner>;
} {
  const bmc = new LaggingBmc();
  const drivers = new DriverRegistry();
  drivers.register('fake', (_address, _credentials, options) => {
    bmc.options = options;
    return {
      power: {
        getPowerState: (): Promise<PowerState> => (bmc.failWith === undefined ? Promise.resolve(bmc.state) : Promise.reject(bmc.failWith)),
        setPower: (action: PowerAction): Promise<void> => {
          bmc.setPower(action);
          return Promise.resolve();
        },
      },
    };
  });
  const store = createMemoryStore();
  const clock = { offsetMs: 0 };
  const woken: string[] = [];
  let ids = 0;
  const factory = new LocalFactory({
    store, nodes: new NodeTable(store.nodes, store.inventories), drivers, nowMs: () => Date.now() + clock.offsetMs, newId: () => `id-${++ids}`,
    pollMs: 0, wake: (name) => woken.push(name), power: { pollMs: 100, ...power },
  });
  t.after(async () => {
    bmc.close();
    await factory.close();
  });
  const provisioner = async (annotations: Record<string, string> = {}): Promise<Provisioner> => {
    const data = hostData('h0', { bmcAddress: 'fake://h0-bmc' });
    return factory.newProvisioner({ ...data, objectMeta: { ...data.objectMeta, annotations } }, () => undefined);
  };
  return { bmc, factory, woken, clock, provisioner };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('a lagging BMC gets one power request per intent, and the observed power follows within a poll of the BMC showing it', async (t) => {
  const b = bench(t);
  b.bmc.lagMs = 1_200;
  const p = await b.provisioner();
  assert.equal((await p.validateManagementAccess(accessData(), false, false)).result.errorMessage, '');
  // The controller re-asks every few hundred ms while the BMC still shows off.
  const started = Date.now();
  let reconciles = 0;
  for (; reconciles < 40 && !(await p.updateHardwareState()).poweredOn; reconciles += 1) {
    const result = await p.powerOn(false);
    assert.equal(result.errorMessage, '');
    await sleep(100);
  }
  assert.deepEqual(b.bmc.requests, ['on'], `one request for one intent (${reconciles} reconciles)`);
  assert.ok(b.bmc.shownAt !== undefined);
  assert.deepEqual(b.woken, ['h0'], 'the host is woken when the BMC shows the new state');
  assert.equal((await p.powerOn(false)).dirty, false, 'done');
  const lag = Date.now() - b.bmc.shownAt;
  assert.ok(lag < 1_000, `poweredOn followed ${lag} ms after the BMC showed on (took ${Date.now() - started} ms in all)`);
  // Off the same way: one request.
  for (let i = 0; i < 40 && (await p.updateHardwareState()).poweredOn !== false; i += 1) {
    await p.powerOff('hard', false, 'metadata');
    await sleep(100);
  }
  assert.deepEqual(b.bmc.requests, ['on', 'off']);
});

test('a power change the BMC never shows fails naming the power state change timeout', async (t) => {
  const b = bench(t, { changeTimeoutMs: 300 });
  b.bmc.lagMs = 60_000;
  const p = await b.provisioner();
  await p.validateManagementAccess(accessData(), false, false);
  assert.equal((await p.powerOn(false)).dirty, true);
  await sleep(350);
  const failed = await p.powerOn(false);
  assert.match(failed.errorMessage, /did not show the new power state within the power state change timeout of 0\.3 s \(bmc\.powerStateChangeTimeoutSeconds\)/);
  assert.deepEqual(b.bmc.requests, ['on'], 'never re-sent while waiting');
});

test('soft power-off, power on, then past the soft-off timeout power off again: a new ACPI request, no stale "did not finish"', async (t) => {
  const b = bench(t, { softOffTimeoutMs: 1_000 });
  b.bmc.lagMs = 50;
  b.bmc.state = 'on';
  b.bmc.ignoreSoftOff = true;
  const p = await b.provisioner();
  await p.validateManagementAccess(accessData(), false, false);
  assert.equal((await p.powerOff('soft', false, 'metadata')).dirty, true);
  assert.deepEqual(b.bmc.requests, ['soft-off']);
  // The operator changes their mind: on again (the BMC still shows on).
  assert.equal((await p.powerOn(false)).dirty, false);
  b.clock.offsetMs += 5_000; // well past the (shortened) soft-off timeout
  const again = await p.powerOff('soft', false, 'metadata');
  assert.equal(again.errorMessage, '', 'no immediate "did not finish"');
  assert.deepEqual(b.bmc.requests, ['soft-off', 'soft-off'], 'an ACPI soft-off request is sent again');
  // That power-off's own timeout still holds.
  b.clock.offsetMs += 1_001;
  assert.match((await p.powerOff('soft', false, 'metadata')).errorMessage, /soft power off did not finish within 1 s/);
});

test('refused credentials and a BMC name that does not resolve end registration with the BMC\'s reason, not a transient retry', async (t) => {
  const b = bench(t);
  const p = await b.provisioner();
  assert.equal((await p.validateManagementAccess(accessData(), false, false)).result.errorMessage, '');
  b.bmc.failWith = new BmcHostUnresolvedError('ipmi://no-such-host.invalid:623', 'no-such-host.invalid', 'ENOTFOUND', true);
  // Registered before (known), same credentials: an unresolvable name is still the user's to fix.
  const unresolved = await p.validateManagementAccess(accessData(), false, true);
  assert.match(unresolved.result.errorMessage, /cannot resolve the host name no-such-host\.invalid \(ENOTFOUND/);
  b.bmc.failWith = new BmcError(BmcErrorCode.auth, 'RAKP 2: unauthorized name (0x0d)');
  const refused = await p.validateManagementAccess(accessData(), true, false);
  assert.match(refused.result.errorMessage, /RAKP 2: unauthorized name/);
  b.bmc.failWith = new BmcError(BmcErrorCode.protocol, 'Open Session answered algorithms 0/0/0: refusing', { permanent: true });
  const protocol = await p.validateManagementAccess(accessData(), false, true);
  assert.match(protocol.result.errorMessage, /refusing/, 'a permanent protocol error is a registration error too');
});

test('the rackside.io/ipmi-cipher-suite annotation reaches the driver as ipmiCipherSuite', async (t) => {
  const b = bench(t);
  const p = await b.provisioner({ 'rackside.io/ipmi-cipher-suite': '3' });
  await p.validateManagementAccess(accessData(), false, false);
  const pinned = (): DriverOptions['ipmiCipherSuite'] => b.bmc.options?.ipmiCipherSuite;
  assert.equal(pinned(), '3');
  const q = await b.provisioner();
  await q.validateManagementAccess(accessData(), false, false);
  assert.equal(pinned(), undefined, 'removing the annotation rebuilds the driver without the pin');
});

test('out-of-band inventory warnings become Warning events naming the skipped part', () => {
  const events: string[] = [];
  const inventory = { warnings: ['Memory /redfish/v1/Systems/1/Memory answered HTTP 404: skipped, the rest of the inventory is kept'] } as unknown as OutOfBandInventory;
  assert.equal(publishInventoryWarnings(inventory, (reason, message, type) => events.push(`${type ?? 'Normal'} ${reason}: ${message}`)), 1);
  assert.deepEqual(events, ['Warning InventoryPartSkipped: BMC inventory: Memory /redfish/v1/Systems/1/Memory answered HTTP 404: skipped, the rest of the inventory is kept']);
});

test('the rackside.io/ipmi-cipher-suite annotation accepts 17, 3 and 17,3; anything else is a validation error naming it', () => {
  for (const value of ['17', '3', '17,3', '3, 17']) checkAnnotations({} as BareMetalHostSpec, { 'rackside.io/ipmi-cipher-suite': value }, 'metadata');
  for (const value of ['0', '17,0', '1', 'seventeen', '', '17,17']) {
    assert.throws(() => { checkAnnotations({} as BareMetalHostSpec, { 'rackside.io/ipmi-cipher-suite': value }, 'metadata'); },
      (err: Error) => /rackside\.io\/ipmi-cipher-suite/.test(err.message) && /allowed are "17", "3", "17,3"/.test(err.message), value);
  }
});
