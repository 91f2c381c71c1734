import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateFirmwareSettings } from '../../../agent/host/validation.js';
import type { DesiredSettingsMap, SettingSchema } from '../../../agent/host/types.js';

/** A Dell-like BIOS schema covering every attribute type. */
const schema: Record<string, SettingSchema> = {
  ProcVirtualization: { attribute_type: 'Enumeration', allowable_values: ['Enabled', 'Disabled'] },
  NetworkBootRetryCount: { attribute_type: 'Integer', lower_bound: 0, upper_bound: 20 },
  CustomPostMessage: { attribute_type: 'String', min_length: 2, max_length: 8 },
  SecureBootEnabled: { attribute_type: 'Boolean' },
  SysPassword: { attribute_type: 'Password' },
  SetupPassword: { attribute_type: 'String', max_length: 32 },
  ServiceTag: { attribute_type: 'String', read_only: true },
  VendorOnly: { attribute_type: '' },
  Legacy: {},
  Weird: { attribute_type: 'Float' as SettingSchema['attribute_type'] },
};

const cases: Record<string, { settings: DesiredSettingsMap; want: string[] }> = {
  'valid enumeration': { settings: { ProcVirtualization: 'Disabled' }, want: [] },
  'unknown enumeration value': { settings: { ProcVirtualization: 'On' }, want: ['Setting ProcVirtualization is invalid, unknown enumeration value - On'] },
  'integer as number within bounds': { settings: { NetworkBootRetryCount: 20 }, want: [] },
  'integer as string within bounds': { settings: { NetworkBootRetryCount: '5' }, want: [] },
  'integer string that is not a number': { settings: { NetworkBootRetryCount: 'five' }, want: ['Setting NetworkBootRetryCount is invalid, String five entered while integer expected'] },
  'integer with trailing junk': { settings: { NetworkBootRetryCount: '5x' }, want: ['Setting NetworkBootRetryCount is invalid, String 5x entered while integer expected'] },
  'integer below minimum': { settings: { NetworkBootRetryCount: -1 }, want: ['Setting NetworkBootRetryCount is invalid, integer -1 is below minimum value 0'] },
  'integer above maximum': { settings: { NetworkBootRetryCount: '21' }, want: ['Setting NetworkBootRetryCount is invalid, integer 21 is above maximum value 20'] },
  'string within lengths': { settings: { CustomPostMessage: 'rack7' }, want: [] },
  'string too short': { settings: { CustomPostMessage: 'x' }, want: ['Setting CustomPostMessage is invalid, string x length is below minimum length 2'] },
  'string too long': { settings: { CustomPostMessage: 'welcome to rack 7' }, want: ['Setting CustomPostMessage is invalid, string welcome to rack 7 length is above maximum length 8'] },
  'boolean literal': { settings: { SecureBootEnabled: 'true' }, want: [] },
  'boolean not literal': { settings: { SecureBootEnabled: 'yes' }, want: ['Setting SecureBootEnabled is invalid, yes is not a boolean'] },
  'password type': { settings: { SysPassword: 'x' }, want: ["Setting SysPassword is invalid, Password fields can't be set"] },
  'name containing Password, string type': { settings: { SetupPassword: 'x' }, want: ["Setting SetupPassword is invalid, Password fields can't be set"] },
  'read-only checked first': { settings: { ServiceTag: 'ABC1234' }, want: ['Setting ServiceTag is invalid, it is ReadOnly'] },
  'empty type accepted': { settings: { VendorOnly: 'anything' }, want: [] },
  'missing type accepted': { settings: { Legacy: 'anything' }, want: [] },
  'unexpected type': { settings: { Weird: '1.5' }, want: ['Setting Weird is invalid, unexpected attribute type Float'] },
  'not in the schema': { settings: { BootOrder: 'NIC.1' }, want: ['Setting BootOrder is invalid, it is not in the associated schema'] },
  'prototype keys are not schema entries': { settings: { toString: 'x' }, want: ['Setting toString is invalid, it is not in the associated schema'] },
  'several errors, sorted by name': {
    settings: { SecureBootEnabled: 'no', AAA: '1', ProcVirtualization: 'Enabled' },
    want: ['Setting AAA is invalid, it is not in the associated schema', 'Setting SecureBootEnabled is invalid, no is not a boolean'],
  },
};

for (const [name, c] of Object.entries(cases)) {
  test(`validateFirmwareSettings: ${name}`, () => {
    assert.deepEqual(validateFirmwareSettings(c.settings, schema), c.want);
  });
}
