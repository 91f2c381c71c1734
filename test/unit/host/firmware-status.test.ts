/**
 * The pure rules of agent/host/firmware-status.ts: FirmwareSchema names, condition bookkeeping
 * (`meta.SetStatusCondition`), pending changes (not ready for another generation, not
 * pending when invalid) and the update difference.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HostFirmwareComponents, HostFirmwareSettings } from '../../../agent/host/firmware-types.js';
import {
  evaluateFirmwareComponents,
  evaluateFirmwareSettings,
  firmwareComponentsPending,
  firmwareSchemaName,
  firmwareSettingsPending,
  isKnownFirmwareComponent,
  setCondition,
  updatesDifference,
} from '../../../agent/host/firmware-status.js';
import type { Condition } from '../../../agent/host/firmware-types.js';
import { cannedFirmwareSchema, cannedFirmwareSettings } from '../../../agent/provisioner/canned-hardware.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:05:00.000Z';

function hfs(settings: Record<string, string | number>, generation = 1): HostFirmwareSettings {
  return {
    apiVersion: 'metal3.io/v1alpha1', kind: 'HostFirmwareSettings',
    metadata: { name: 'h', namespace: 'n', uid: '', resourceVersion: '1', generation, creationTimestamp: '' },
    spec: { settings }, status: { settings: cannedFirmwareSettings() },
  };
}

function hfc(updates: { component: string; url: string }[], applied?: { component: string; url: string }[]): HostFirmwareComponents {
  return {
    apiVersion: 'metal3.io/v1alpha1', kind: 'HostFirmwareComponents',
    metadata: { name: 'h', namespace: 'n', uid: '', resourceVersion: '1', generation: 1, creationTimestamp: '' },
    spec: { updates }, status: applied === undefined ? {} : { updates: applied },
  };
}

test('firmwareSchemaName: schema-<8 hex>, the same for the same schema whatever the key order, different when a bound changes', () => {
  const schema = cannedFirmwareSchema();
  const name = firmwareSchemaName(schema);
  assert.match(name, /^schema-[0-9a-f]{8}$/);
  assert.equal(firmwareSchemaName(Object.fromEntries(Object.entries(schema).reverse())), name);
  assert.notEqual(firmwareSchemaName({ ...schema, NetworkBootRetryCount: { attribute_type: 'Integer', lower_bound: 0, upper_bound: 21 } }), name);
});

test('setCondition: lastTransitionTime moves only when the status changes; any field change counts', () => {
  const conditions: Condition[] = [];
  assert.equal(setCondition(conditions, { type: 'Valid', status: 'True', observedGeneration: 1, reason: 'Success', message: '' }, T0), true);
  assert.equal(setCondition(conditions, { type: 'Valid', status: 'True', observedGeneration: 1, reason: 'Success', message: '' }, T1), false);
  assert.equal(setCondition(conditions, { type: 'Valid', status: 'True', observedGeneration: 2, reason: 'Success', message: '' }, T1), true);
  assert.equal(conditions[0]?.lastTransitionTime, T0);
  assert.equal(setCondition(conditions, { type: 'Valid', status: 'False', observedGeneration: 2, reason: 'ConfigurationError', message: 'x' }, T1), true);
  assert.equal(conditions[0].lastTransitionTime, T1);
  assert.equal(conditions.length, 1);
});

test('settings: pending only when changed, valid and evaluated for the current generation', () => {
  const object = hfs({ ProcVirtualization: 'Disabled' });
  assert.deepEqual(firmwareSettingsPending(object), { dirty: false }, 'never evaluated');
  const first = evaluateFirmwareSettings(object, cannedFirmwareSchema(), T0);
  assert.deepEqual(first, { changed: true, newErrors: [] });
  assert.deepEqual(firmwareSettingsPending(object), { dirty: true });
  assert.deepEqual(evaluateFirmwareSettings(object, cannedFirmwareSchema(), T1), { changed: false, newErrors: [] }, 'idempotent');
  object.metadata.generation = 2;
  assert.match(firmwareSettingsPending(object).notReady ?? '', /generation 2 != observed generation 1/);
  object.spec.settings = { ProcVirtualization: 'Off' };
  const invalid = evaluateFirmwareSettings(object, cannedFirmwareSchema(), T1);
  assert.deepEqual(invalid.newErrors, ['Setting ProcVirtualization is invalid, unknown enumeration value - Off']);
  assert.deepEqual(firmwareSettingsPending(object), { dirty: false });
  assert.deepEqual(evaluateFirmwareSettings(object, cannedFirmwareSchema(), T1).newErrors, [], 'an unchanged problem is published once');
  object.spec.settings = { ProcVirtualization: 'Enabled' };
  evaluateFirmwareSettings(object, cannedFirmwareSchema(), T1);
  assert.deepEqual(firmwareSettingsPending(object), { dirty: false }, 'already the value on the host');
  assert.equal(object.status.conditions?.find((c) => c.type === 'ChangeDetected')?.status, 'False');
});

test('settings: changed but the host reported no settings yet → not ready', () => {
  const object = hfs({ LogicalProc: 'Disabled' });
  evaluateFirmwareSettings(object, undefined, T0);
  object.status.settings = {};
  assert.equal(firmwareSettingsPending(object).notReady, 'host firmware status settings not available');
});

test('components: known names, the pending difference, the components stored', () => {
  for (const [name, ok] of [['bmc', true], ['bios', true], ['nic:NIC.1', true], ['nic:', false], ['gpu', false]] as const) assert.equal(isKnownFirmwareComponent(name), ok, name);
  const a = { component: 'bios', url: 'http://fw/a' };
  const b = { component: 'bmc', url: 'http://fw/b' };
  assert.deepEqual(updatesDifference([a, b], undefined), [a, b]);
  assert.deepEqual(updatesDifference([a, b], [a]), [b]);
  assert.deepEqual(updatesDifference([a, { ...b, url: 'http://fw/b2' }], [a, b]), [{ ...b, url: 'http://fw/b2' }]);
  const object = hfc([a], [a]);
  const components = [{ component: 'bios', initialVersion: '1', currentVersion: '2' }];
  assert.deepEqual(evaluateFirmwareComponents(object, components, T0), { changed: true, newErrors: [] });
  assert.deepEqual(object.status.components, components);
  assert.deepEqual(firmwareComponentsPending(object), { dirty: false }, 'handed over already');
  const pending = hfc([a, b], [a]);
  evaluateFirmwareComponents(pending, undefined, T0);
  assert.deepEqual(firmwareComponentsPending(pending), { dirty: true });
  assert.equal(pending.status.components, undefined, 'components untouched when not read');
});
