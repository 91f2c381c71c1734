/**
 * The BMC driver conformance suite: one set of behavioural cases every driver runs (fake,
 * Redfish against the virtual BMC, IPMI against ipmi_sim), with declared skips and their
 * reasons. A test file calls `runBmcDriverConformance(target)`; each case gets a fresh driver
 * from `target.setup()`. Cases only use the capability interfaces (drivers/capabilities.ts)
 * and discover what they change (e.g. a writable BIOS enumeration) from the driver itself.
 *
 * Skips: `skips` maps a case name (`power.on-off`) or a capability name (`virtualMedia`, which
 * skips every case of it) to the reason, shown by the runner.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BmcErrorCode, CAPABILITY_NAMES, isBmcError, waitForPowerState, type BmcDriver, type CapabilityName, type TaskStatus } from '../../drivers/index.js';
import { softPowerOff } from '../../drivers/power-helpers.js';
import type { BmcErrorCodeValue } from '../../drivers/errors.js';

/** Every case, in run order. */
export const CONFORMANCE_CASES = [
  'power.on-off', 'power.reset-from-off', 'power.soft-off', 'bootDevice.once', 'bootDevice.persistent-uefi',
  'virtualMedia.insert-replace-eject', 'biosSettings.schema-and-pending', 'biosSettings.refuses-bad-values',
  'firmware.update-task', 'tasks.unknown-id', 'raid.create-and-delete', 'eventSubscriptions.lifecycle',
  'secureBoot.toggle', 'inventory.hardware', 'info.probe', 'unsupported-is-typed', 'close.idempotent',
] as const;

/** A case name. */
export type ConformanceCase = (typeof CONFORMANCE_CASES)[number];

/** One driver under test, fresh for each case. */
export interface ConformanceHarness {
  readonly driver: BmcDriver;
  /** Closes the driver and stops its BMC. */
  dispose(): Promise<void>;
}

/** What a test file hands to {@link runBmcDriverConformance}. */
export interface ConformanceTarget {
  /** Shown in every test name, e.g. `redfish (virtual BMC, https)`. */
  readonly name: string;
  setup(): Promise<ConformanceHarness>;
  /** Case or capability → reason. */
  readonly skips?: Readonly<Partial<Record<ConformanceCase | CapabilityName, string>>>;
  /**
   * Cases this target cannot pass as written, each with its reason and a check of what it does
   * instead (a limitation is asserted, never skipped).
   */
  readonly limits?: Readonly<Partial<Record<ConformanceCase, { readonly reason: string; readonly check: (driver: BmcDriver) => Promise<void> }>>>;
  /** Power-state polling; default 10 s timeout, 20 ms polls. */
  readonly powerWait?: { readonly timeoutMs: number; readonly pollMs: number };
  /** Task polling; default 10 s timeout, 10 ms polls. */
  readonly taskWait?: { readonly timeoutMs: number; readonly pollMs: number };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Asserts `promise` rejects with a BMC error of `code`. */
async function rejectsWith(promise: Promise<unknown>, code: BmcErrorCodeValue): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isBmcError(err, code), `expected ${code}, got ${err instanceof Error ? `${(err as { code?: string }).code ?? ''} ${err.message}` : String(err)}`);
    return true;
  });
}

/** Polls a task until it leaves pending/running. */
export async function waitForTaskEnd(driver: BmcDriver, taskId: string, wait: { timeoutMs: number; pollMs: number }): Promise<TaskStatus> {
  const deadline = performance.now() + wait.timeoutMs;
  for (;;) {
    const status = await driver.tasks.getTask(taskId);
    if (status.state !== 'pending' && status.state !== 'running') return status;
    if (performance.now() > deadline) assert.fail(`task ${taskId} still ${status.state} after ${wait.timeoutMs} ms`);
    await sleep(wait.pollMs);
  }
}

/** Registers every conformance case for `target` with node:test. */
export function runBmcDriverConformance(target: ConformanceTarget): void {
  const powerWait = target.powerWait ?? { timeoutMs: 10_000, pollMs: 20 };
  const taskWait = target.taskWait ?? { timeoutMs: 10_000, pollMs: 10 };
  const skipOf = (name: ConformanceCase): string | undefined => {
    const capability = name.split('.')[0] as CapabilityName;
    return target.skips?.[name] ?? target.skips?.[capability];
  };
  const wait = (driver: BmcDriver, state: 'on' | 'off'): Promise<void> =>
    waitForPowerState(driver.power, state, { ...powerWait, address: driver.address.raw });
  const powerOn = async (driver: BmcDriver): Promise<void> => {
    await driver.power.setPower('on');
    await wait(driver, 'on');
  };

  const cases: Record<ConformanceCase, (driver: BmcDriver) => Promise<void>> = {
    'power.on-off': async (d) => {
      assert.ok(['on', 'off', 'powering-on', 'powering-off', 'unknown'].includes(await d.power.getPowerState()));
      await powerOn(d);
      await d.power.setPower('on'); // no-op when on
      assert.equal(await d.power.getPowerState(), 'on');
      await d.power.setPower('off');
      await wait(d, 'off');
      await d.power.setPower('soft-off'); // no-op when off
      await d.power.setPower('off');
      assert.equal(await d.power.getPowerState(), 'off');
    },
    'power.reset-from-off': async (d) => {
      if ((await d.power.getPowerState()) !== 'off') {
        await d.power.setPower('off');
        await wait(d, 'off');
      }
      await d.power.setPower('reset');
      await wait(d, 'on');
      await d.power.setPower('reset');
      await wait(d, 'on');
    },
    'power.soft-off': async (d) => {
      await powerOn(d);
      const how = await softPowerOff(d.power, { ...powerWait, graceMs: powerWait.timeoutMs, address: d.address.raw });
      assert.equal(how, 'soft', 'a cooperative host shuts down on the graceful request');
      assert.equal(await d.power.getPowerState(), 'off');
    },
    'bootDevice.once': async (d) => {
      await d.bootDevice.setBootDevice('pxe');
      const got = await d.bootDevice.getBootDevice();
      assert.equal(got.device, 'pxe');
      assert.equal(got.persistent, false);
    },
    'bootDevice.persistent-uefi': async (d) => {
      await d.bootDevice.setBootDevice('disk', { persistent: true, mode: 'uefi' });
      await d.bootDevice.setBootDevice('disk', { persistent: true, mode: 'uefi' }); // same override: no-op
      assert.deepEqual(await d.bootDevice.getBootDevice(), { device: 'disk', persistent: true, mode: 'uefi' });
    },
    'virtualMedia.insert-replace-eject': async (d) => {
      const cd = async (): Promise<{ inserted: boolean; imageUrl: string | undefined }> => {
        const slot = (await d.virtualMedia.getMediaStatus()).find((s) => s.device === 'cd');
        assert.ok(slot, 'a cd slot is listed');
        return { inserted: slot.inserted, imageUrl: slot.imageUrl };
      };
      await d.virtualMedia.insertMedia({ imageUrl: 'http://images.example/a.iso' });
      assert.deepEqual(await cd(), { inserted: true, imageUrl: 'http://images.example/a.iso' });
      await d.virtualMedia.insertMedia({ imageUrl: 'http://images.example/a.iso' });
      await d.virtualMedia.insertMedia({ imageUrl: 'http://images.example/b.iso' });
      assert.deepEqual(await cd(), { inserted: true, imageUrl: 'http://images.example/b.iso' });
      await d.virtualMedia.ejectMedia();
      await d.virtualMedia.ejectMedia(); // empty: no-op
      assert.equal((await cd()).inserted, false);
    },
    'biosSettings.schema-and-pending': async (d) => {
      const before = await d.biosSettings.getBiosSettings();
      const entry = Object.entries(before.schema).find(([name, s]) => s.attributeType === 'Enumeration' && s.readOnly !== true
        && (s.allowableValues?.length ?? 0) >= 2 && before.current[name] !== undefined && !name.includes('Password'));
      assert.ok(entry, 'a writable enumeration attribute exists');
      const [name, schema] = entry;
      const value = (schema.allowableValues ?? []).find((v) => v !== before.current[name]) ?? '';
      const staged = await d.biosSettings.applyBiosSettings({ [name]: value });
      assert.equal(staged.rebootRequired, true);
      assert.equal((await d.biosSettings.getBiosSettings()).pending[name], value);
      const again = await d.biosSettings.applyBiosSettings({ [name]: value }); // already pending: no-op
      assert.equal(again.taskId, undefined);
    },
    'biosSettings.refuses-bad-values': async (d) => {
      const { schema } = await d.biosSettings.getBiosSettings();
      const enumeration = Object.entries(schema).find(([, s]) => s.attributeType === 'Enumeration' && s.readOnly !== true);
      assert.ok(enumeration);
      await rejectsWith(d.biosSettings.applyBiosSettings({ [enumeration[0]]: 'NotAnAllowedValue' }), BmcErrorCode.protocol);
      await rejectsWith(d.biosSettings.applyBiosSettings({ NoSuchAttributeAnywhere: '1' }), BmcErrorCode.protocol);
      const readOnly = Object.entries(schema).find(([, s]) => s.readOnly === true);
      if (readOnly !== undefined) await rejectsWith(d.biosSettings.applyBiosSettings({ [readOnly[0]]: 'x' }), BmcErrorCode.protocol);
    },
    'firmware.update-task': async (d) => {
      const inventory = await d.firmware.getFirmwareInventory();
      const components = inventory.map((c) => c.component);
      assert.ok(components.includes('bmc') && components.includes('bios'), `components: ${components.join(', ')}`);
      const bios = inventory.find((c) => c.component === 'bios');
      assert.ok(bios);
      const { taskId } = await d.firmware.simpleUpdate({ imageUrl: 'http://images.example/bios-9.9.9.bin', targets: [bios.id] });
      assert.equal((await waitForTaskEnd(d, taskId, taskWait)).state, 'completed');
      const after = (await d.firmware.getFirmwareInventory()).find((c) => c.id === bios.id);
      assert.equal(after?.version, '9.9.9');
    },
    'tasks.unknown-id': async (d) => {
      await rejectsWith(d.tasks.getTask('no-such-task'), BmcErrorCode.protocol);
    },
    'raid.create-and-delete': async (d) => {
      const { controllers } = await d.raid.getRaidConfig();
      assert.ok(controllers.length >= 1 && (controllers[0]?.drives.length ?? 0) >= 2);
      const follow = async (taskId: string | undefined): Promise<void> => {
        if (taskId !== undefined) assert.equal((await waitForTaskEnd(d, taskId, taskWait)).state, 'completed');
      };
      await follow((await d.raid.applyRaidConfig([{ level: '1', name: 'os' }])).taskId);
      const { volumes } = await d.raid.getRaidConfig();
      const [volume, extra] = volumes;
      assert.ok(volume !== undefined && extra === undefined, `one volume, got ${volumes.length}`);
      assert.equal(volume.level, '1');
      assert.equal(volume.physicalDisks.length, 2);
      assert.equal((await d.raid.applyRaidConfig([{ level: '1', name: 'os' }])).taskId, undefined); // same target: no-op
      await follow((await d.raid.applyRaidConfig([])).taskId);
      assert.equal((await d.raid.getRaidConfig()).volumes.length, 0);
    },
    'eventSubscriptions.lifecycle': async (d) => {
      const { id } = await d.eventSubscriptions.createSubscription({ destination: 'http://127.0.0.1:9/events', context: 'conformance', httpHeaders: { 'X-Token': 't' } });
      const listed = (await d.eventSubscriptions.listSubscriptions()).find((s) => s.id === id);
      assert.deepEqual(listed, { id, destination: 'http://127.0.0.1:9/events', context: 'conformance' });
      await d.eventSubscriptions.deleteSubscription(id);
      await d.eventSubscriptions.deleteSubscription(id); // missing: no-op
      assert.equal((await d.eventSubscriptions.listSubscriptions()).some((s) => s.id === id), false);
    },
    'secureBoot.toggle': async (d) => {
      await d.secureBoot.setSecureBoot(true);
      assert.equal((await d.secureBoot.getSecureBoot()).enabled, true);
      await d.secureBoot.setSecureBoot(true);
      await d.secureBoot.setSecureBoot(false);
      assert.equal((await d.secureBoot.getSecureBoot()).enabled, false);
    },
    'inventory.hardware': async (d) => {
      const inv = await d.inventory.getInventory();
      assert.ok(inv.processors.length >= 1);
      assert.ok(inv.nics.length >= 1 && inv.nics.every((n) => n.macAddress === undefined || /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(n.macAddress)));
      assert.ok((inv.memoryMebibytes ?? 0) > 0);
    },
    'info.probe': async (d) => {
      const info = await d.info.getBmcInfo();
      assert.equal(typeof info.vendor, 'string');
      assert.ok(info.probed.includes('power'));
      assert.ok(info.probed.every((c) => (CAPABILITY_NAMES as readonly string[]).includes(c)));
    },
    'unsupported-is-typed': async (d) => {
      let rejected = 0;
      for (const name of CAPABILITY_NAMES) {
        if (d.supports(name)) continue;
        await rejectsWith(callAny(d, name), BmcErrorCode.unsupported);
        rejected += 1;
      }
      assert.equal(d.supported.length + rejected, CAPABILITY_NAMES.length);
    },
    'close.idempotent': async (d) => {
      await d.close();
      await d.close();
    },
  };

  for (const name of CONFORMANCE_CASES) {
    const capability = name.split('.')[0] as CapabilityName;
    const notOffered = target.skips?.[name] === undefined ? target.skips?.[capability] : undefined;
    if (notOffered !== undefined) {
      // A capability declared absent is checked, not skipped: the driver must say so and reject typed.
      test(`conformance ${target.name}: ${name} — ${capability} not offered (${notOffered})`, async () => {
        const harness = await target.setup();
        try {
          assert.equal(harness.driver.supports(capability), false, `${capability} is declared absent but the driver offers it`);
          await assert.rejects(callAny(harness.driver, capability), (err: unknown) => isBmcError(err, BmcErrorCode.unsupported));
        } finally {
          await harness.dispose();
        }
      });
      continue;
    }
    const limit = target.limits?.[name];
    if (limit !== undefined) {
      test(`conformance ${target.name}: ${name} — limited (${limit.reason})`, async () => {
        const harness = await target.setup();
        try {
          await limit.check(harness.driver);
        } finally {
          await harness.dispose();
        }
      });
      continue;
    }
    const skip = skipOf(name);
    test(`conformance ${target.name}: ${name}`, skip === undefined ? {} : { skip }, async () => {
      const harness = await target.setup();
      try {
        await cases[name](harness.driver);
      } finally {
        await harness.dispose();
      }
    });
  }
}

/** Calls the first method of a capability (used to check that unsupported ones reject typed). */
function callAny(driver: BmcDriver, name: CapabilityName): Promise<unknown> {
  switch (name) {
    case 'power': return driver.power.getPowerState();
    case 'bootDevice': return driver.bootDevice.getBootDevice();
    case 'virtualMedia': return driver.virtualMedia.getMediaStatus();
    case 'biosSettings': return driver.biosSettings.getBiosSettings();
    case 'firmware': return driver.firmware.getFirmwareInventory();
    case 'tasks': return driver.tasks.getTask('x');
    case 'raid': return driver.raid.getRaidConfig();
    case 'eventSubscriptions': return driver.eventSubscriptions.listSubscriptions();
    case 'secureBoot': return driver.secureBoot.getSecureBoot();
    case 'inventory': return driver.inventory.getInventory();
    case 'info': return driver.info.getBmcInfo();
  }
}
