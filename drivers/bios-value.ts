/**
 * @module BIOS value validation against an attribute schema in metal3's order
 * (docs/metal3-mapping.md, "Firmware objects": read-only, names containing "Password", Enumeration, Integer
 * bounds, String lengths, Boolean literals, Password type, unknown attribute). Shared by every
 * driver that stages BIOS changes (Redfish, the fake).
 * @pure
 */
import type { BiosAttributeSchema } from './capabilities.js';

/** Checks one value against its schema; returns the problem, or undefined when acceptable. */
export function checkBiosValue(name: string, schema: BiosAttributeSchema | undefined, value: string): string | undefined {
  if (schema === undefined) return `unknown BIOS attribute ${name}`;
  if (schema.readOnly === true) return `BIOS attribute ${name} is read-only`;
  if (name.includes('Password')) return `BIOS attribute ${name} looks like a password and cannot be set`;
  switch (schema.attributeType) {
    case 'Password': return `BIOS attribute ${name} is a password and cannot be set`;
    case 'Enumeration':
      return schema.allowableValues?.includes(value) === true ? undefined
        : `BIOS attribute ${name}: "${value}" is not one of ${(schema.allowableValues ?? []).join(', ')}`;
    case 'Integer': {
      if (!/^-?[0-9]+$/.test(value)) return `BIOS attribute ${name}: "${value}" is not an integer`;
      const n = Number(value);
      if ((schema.lowerBound !== undefined && n < schema.lowerBound) || (schema.upperBound !== undefined && n > schema.upperBound)) {
        return `BIOS attribute ${name}: ${value} is outside ${schema.lowerBound ?? '-∞'}..${schema.upperBound ?? '∞'}`;
      }
      return undefined;
    }
    case 'String':
      if ((schema.minLength !== undefined && value.length < schema.minLength) || (schema.maxLength !== undefined && value.length > schema.maxLength)) {
        return `BIOS attribute ${name}: length ${value.length} is outside ${schema.minLength ?? 0}..${schema.maxLength ?? '∞'}`;
      }
      return undefined;
    case 'Boolean':
      return value === 'true' || value === 'false' ? undefined : `BIOS attribute ${name}: "${value}" is not true or false`;
    case '':
      return undefined;
  }
}
