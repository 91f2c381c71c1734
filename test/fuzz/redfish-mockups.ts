/**
 * @module Seeds of the Redfish fuzzers: the recorded-style mockups of a generic BMC (DMTF), an
 * iDRAC 9 and an iLO 5 (test/fixtures/redfish/), completed with the collection resources their
 * members imply (`…/Processors` listing `…/Processors/CPU1` …) so a driver can walk them, the odd
 * bodies of odd.json, and the Redfish vocabulary (property names, enum words) for mutations.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Json } from './mutate-json.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/redfish');

/** The vendors with a mockup. */
export const VENDORS = ['generic', 'idrac', 'ilo5'] as const;
/** One of {@link VENDORS}. */
export type Vendor = (typeof VENDORS)[number];

/** A mockup: resource path → body. */
export type Mockup = Readonly<Record<string, Json>>;

function load(name: string): Record<string, Json> {
  return JSON.parse(readFileSync(resolve(FIXTURES, name), 'utf8')) as Record<string, Json>;
}

function parentOf(path: string): string | undefined {
  const slash = path.endsWith('/');
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length <= 2) return undefined; // /redfish/v1 has no parent here
  const parent = `/${parts.slice(0, -1).join('/')}`;
  return slash ? `${parent}/` : parent;
}

/** The mockup with a collection body for every parent path that has none. */
function complete(mockup: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = { ...mockup };
  const members = new Map<string, string[]>();
  for (const path of Object.keys(mockup)) {
    const parent = parentOf(path);
    if (parent === undefined || Object.hasOwn(mockup, parent)) continue;
    members.set(parent, [...members.get(parent) ?? [], path]);
  }
  for (const [parent, list] of members) out[parent] = { '@odata.id': parent, Members: list.map((m) => ({ '@odata.id': m })), 'Members@odata.count': list.length };
  return out;
}

/** The completed mockups by vendor. */
export const MOCKUPS: Readonly<Record<Vendor, Mockup>> = {
  generic: complete(load('generic/mockup.json')),
  idrac: complete(load('idrac/mockup.json')),
  ilo5: complete(load('ilo5/mockup.json')),
};

/** Every body of every mockup plus the odd bodies: the JSON seeds. */
export const BODIES: readonly Json[] = [...VENDORS.flatMap((v) => Object.values(MOCKUPS[v])), ...Object.values(load('odd.json'))];

function collectKeys(value: Json, keys: Set<string>, strings: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) collectKeys(v, keys, strings);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      keys.add(k);
      collectKeys(v, keys, strings);
    }
  } else if (typeof value === 'string' && value.length < 80) strings.add(value);
}

const keys = new Set<string>(['Members', '@odata.id', 'TaskState', 'JobState', 'Attributes', 'RegistryEntries', 'Location', 'Actions', 'target', 'error', '@Message.ExtendedInfo']);
const strings = new Set<string>(['Completed', 'Exception', 'Running', 'On', 'Off', 'Critical', 'Enumeration', 'Integer', 'Password', 'RAID1', 'SSD', 'x86-64', 'Absent']);
for (const body of BODIES) collectKeys(body, keys, strings);

/** Property names seen in the seeds. */
export const REDFISH_KEYS: readonly string[] = [...keys];
/** Short string values seen in the seeds (enum words, links, names). */
export const REDFISH_STRINGS: readonly string[] = [...strings];
