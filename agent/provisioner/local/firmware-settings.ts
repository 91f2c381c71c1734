/**
 * @module BIOS settings between the drivers' vocabulary and metal3's: the driver's camelCase
 * attribute schema → metal3 `SettingSchema` (JSON snake_case, docs/metal3-mapping.md, "Firmware objects"), the
 * validation of desired settings in upstream's order (agent/host's `validateFirmwareSettings`,
 * whose "Setting X is invalid, …" messages name the attribute), and the changes still to make.
 * @pure
 */
import type { BiosAttributeSchema } from '../../../drivers/index.js';
import type { DesiredSettingsMap, SettingSchema, SettingsMap } from '../../host/types.js';
import { validateFirmwareSettings } from '../../host/validation-firmware.js';

/** Returns metal3's SettingSchema for one driver attribute schema (absent fields omitted). */
export function settingSchemaOf(schema: BiosAttributeSchema): SettingSchema {
  const out: SettingSchema = { attribute_type: schema.attributeType };
  if (schema.allowableValues !== undefined) out.allowable_values = [...schema.allowableValues];
  if (schema.lowerBound !== undefined) out.lower_bound = schema.lowerBound;
  if (schema.upperBound !== undefined) out.upper_bound = schema.upperBound;
  if (schema.minLength !== undefined) out.min_length = schema.minLength;
  if (schema.maxLength !== undefined) out.max_length = schema.maxLength;
  if (schema.readOnly !== undefined) out.read_only = schema.readOnly;
  if (schema.unique !== undefined) out.unique = schema.unique;
  return out;
}

/** Returns the metal3 schema map for a driver's schema map. */
export function settingSchemasOf(schema: Readonly<Record<string, BiosAttributeSchema>>): Record<string, SettingSchema> {
  return Object.fromEntries(Object.entries(schema).map(([name, s]) => [name, settingSchemaOf(s)]));
}

/**
 * Returns the problems of `desired` against the BMC's schema (one "Setting X is invalid, …"
 * per bad attribute, sorted by name), empty when every value may be set.
 */
export function biosSettingProblems(desired: DesiredSettingsMap, schema: Readonly<Record<string, BiosAttributeSchema>>): string[] {
  return validateFirmwareSettings(desired, settingSchemasOf(schema));
}

/** Returns the desired settings whose value differs from the current one (as strings, sorted by name). */
export function biosChanges(desired: Readonly<Record<string, string | number>>, current: SettingsMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(desired).sort()) {
    const value = String(desired[name]);
    if (current[name] !== value) out[name] = value;
  }
  return out;
}
