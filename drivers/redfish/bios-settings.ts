/**
 * @module BIOS change planning for Redfish: validation of requested values against the
 * SettingSchema in metal3's order (docs/metal3-mapping.md, "Firmware objects": read-only, names containing
 * "Password", Enumeration, Integer bounds, String lengths, Boolean literals, Password type,
 * unknown attribute), conversion to the JSON type the BMC expects, and the no-op rule
 * (values already current or pending are not sent again).
 * @pure
 */
import type { BiosAttributeSchema } from '../capabilities.js';
import { checkBiosValue } from '../bios-value.js';

export { checkBiosValue };
import { biosValueToString, type BiosValue } from './resources-config.js';

/** Converts a validated string to the JSON type of the attribute (schema type, else the current value's type). */
export function encodeBiosValue(schema: BiosAttributeSchema | undefined, current: BiosValue | undefined, value: string): BiosValue {
  const type = schema?.attributeType ?? '';
  if (type === 'Integer' || (type === '' && typeof current === 'number' && /^-?[0-9]+(\.[0-9]+)?$/.test(value))) return Number(value);
  if (type === 'Boolean' || (type === '' && typeof current === 'boolean' && (value === 'true' || value === 'false'))) return value === 'true';
  return value;
}

/** Schema inferred from current values when the BMC publishes no AttributeRegistry (type ''). */
export function inferBiosSchema(current: Readonly<Record<string, BiosValue>>): Record<string, BiosAttributeSchema> {
  return Object.fromEntries(Object.keys(current).map((name) => [name, { attributeType: '' as const }]));
}

/** Result of {@link planBiosChanges}. */
export interface BiosPlan {
  /** Attributes to PATCH into the settings object, JSON-typed. */
  readonly patch: Readonly<Record<string, BiosValue>>;
  /** Validation problems; when non-empty nothing must be sent. */
  readonly problems: readonly string[];
}

/**
 * Validates `changes` and keeps those that differ from the pending value (or, with nothing
 * pending, from the current one).
 */
export function planBiosChanges(
  changes: Readonly<Record<string, string | number | boolean>>,
  current: Readonly<Record<string, BiosValue>>,
  pending: Readonly<Record<string, BiosValue>>,
  schema: Readonly<Record<string, BiosAttributeSchema>>,
): BiosPlan {
  const problems: string[] = [];
  const patch: Record<string, BiosValue> = {};
  for (const [name, raw] of Object.entries(changes)) {
    const value = String(raw);
    const attrSchema = Object.hasOwn(schema, name) ? schema[name] : undefined;
    const problem = checkBiosValue(name, attrSchema, value);
    if (problem !== undefined) {
      problems.push(problem);
      continue;
    }
    const effective = Object.hasOwn(pending, name) ? pending[name] : current[name];
    if (effective !== undefined && biosValueToString(effective) === value) continue;
    patch[name] = encodeBiosValue(attrSchema, current[name], value);
  }
  return { patch, problems };
}

/** Pending values: settings-object attributes that differ from the current ones. */
export function pendingBiosValues(
  current: Readonly<Record<string, BiosValue>>, settings: Readonly<Record<string, BiosValue>>,
): Record<string, BiosValue> {
  const out: Record<string, BiosValue> = {};
  for (const [name, value] of Object.entries(settings)) {
    if (!Object.hasOwn(current, name) || biosValueToString(current[name] ?? null) !== biosValueToString(value)) out[name] = value;
  }
  return out;
}
