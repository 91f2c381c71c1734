/**
 * @module Validation of desired BIOS settings (HostFirmwareSettings `spec.settings`) against
 * the host's firmware schema, in upstream's order (`SettingSchema.Validate`,
 * docs/metal3-mapping.md, "Firmware objects"): missing from the schema, read-only, a name containing
 * "Password", then the attribute type's own rule. Messages follow upstream's
 * "Setting X is invalid, …" wording so users can search for them.
 * @pure
 */
import type { DesiredSettingsMap, SettingSchema } from './types.js';

/** Go `strconv.Atoi` syntax: optional sign and decimal digits only. */
const GO_INTEGER = /^[+-]?[0-9]+$/;

function invalid(name: string, message: string): string {
  return `Setting ${name} is invalid, ${message}`;
}

/** One setting's error against its schema, or undefined when the value is acceptable. */
export function validateFirmwareSetting(name: string, value: string | number, schema: SettingSchema): string | undefined {
  if (schema.read_only === true) return invalid(name, 'it is ReadOnly');
  if (name.includes('Password')) return invalid(name, "Password fields can't be set");
  const text = String(value);
  switch (schema.attribute_type) {
    case 'Enumeration':
      return (schema.allowable_values ?? []).includes(text) ? undefined : invalid(name, `unknown enumeration value - ${text}`);
    case 'Integer': {
      if (typeof value === 'string' && !GO_INTEGER.test(value)) return invalid(name, `String ${text} entered while integer expected`);
      const n = typeof value === 'number' ? Math.trunc(value) : Number.parseInt(value, 10);
      if (schema.lower_bound !== undefined && n < schema.lower_bound) return invalid(name, `integer ${n} is below minimum value ${schema.lower_bound}`);
      if (schema.upper_bound !== undefined && n > schema.upper_bound) return invalid(name, `integer ${n} is above maximum value ${schema.upper_bound}`);
      return undefined;
    }
    case 'String':
      if (schema.min_length !== undefined && text.length < schema.min_length) return invalid(name, `string ${text} length is below minimum length ${schema.min_length}`);
      if (schema.max_length !== undefined && text.length > schema.max_length) return invalid(name, `string ${text} length is above maximum length ${schema.max_length}`);
      return undefined;
    case 'Boolean':
      return text === 'true' || text === 'false' ? undefined : invalid(name, `${text} is not a boolean`);
    case 'Password':
      return invalid(name, 'passwords are immutable');
    case '':
    case undefined:
      // BIOS registries may lack type information: accept, as upstream does.
      return undefined;
    default:
      return invalid(name, `unexpected attribute type ${String(schema.attribute_type)}`);
  }
}

/**
 * Checks every desired setting against `schema` and returns the errors, one string per bad
 * setting, sorted by setting name (empty when all are valid).
 */
export function validateFirmwareSettings(settings: DesiredSettingsMap, schema: Record<string, SettingSchema>): string[] {
  const errors: string[] = [];
  for (const name of Object.keys(settings).sort()) {
    const value = settings[name];
    if (value === undefined) continue;
    const entry = Object.hasOwn(schema, name) ? schema[name] : undefined;
    const error = entry === undefined ? invalid(name, 'it is not in the associated schema') : validateFirmwareSetting(name, value, entry);
    if (error !== undefined) errors.push(error);
  }
  return errors;
}
