/**
 * @module Manifest inputs for the BareMetalHost YAML and management API fuzzers: the realistic
 * metal3 manifests of test/unit/host/validation-manifests.ts as seeds, and a generator that
 * mutates them as text (YAML indicators, anchors and aliases, tags, flow style, multi-document
 * markers, Norway-problem scalars), as structure (parsed, mutated as JSON, re-serialized as YAML
 * or JSON), or replaces them with YAML's classic hazards (alias bombs, deep flow nesting,
 * self-referencing anchors, huge block scalars).
 */
import { parseAllDocuments, stringify } from 'yaml';
import {
  DEV_ENV_MANIFEST, KUBECTL_GET_OUTPUT, PRODUCTION_MANIFEST, VARIANT_HOSTS,
} from '../unit/host/validation-manifests.js';
import type { Dice } from './dice.js';
import { mutateJson, type Json } from './mutate-json.js';
import { mutateText } from './mutate-text.js';

/** The seed texts (multi-document YAML). */
export const MANIFEST_TEXTS: readonly string[] = [DEV_ENV_MANIFEST, PRODUCTION_MANIFEST, VARIANT_HOSTS, KUBECTL_GET_OUTPUT];

/** The seed documents as JSON values. */
export const MANIFEST_DOCS: readonly Json[] = MANIFEST_TEXTS.flatMap((text) => parseAllDocuments(text).map((d) => d.toJS() as Json)).filter((d) => d !== null);

/** YAML tokens worth splicing in. */
export const YAML_TOKENS: readonly string[] = [
  '---', '...', '- ', ': ', '? ', '&a ', '*a', '*nope', '<<: *a', '!!binary ', '!!str ', '!!int ', '!!float ', '!!set ', '!!omap ', '!!timestamp ',
  '!custom ', '!!js/function ', '|', '>-', '|+', '{', '}', '[', ']', ',', '#', '%YAML 1.1', '%TAG ! tag:x,2000:', 'yes', 'no', 'on', 'off', 'y', 'n',
  '~', 'null', '.inf', '-.inf', '.nan', '0x1F', '0o17', '1e309', '1_000', '2001-12-14t21:59:43.10-05:00', '"\\u0000"', "'", '"', '\t', '\u00a0',
  'kind: List', 'items:', 'apiVersion: v1', 'kind: Secret', 'kind: BareMetalHost', 'spec:', 'metadata:', 'status:', 'name: ', 'namespace: ',
];

const KEYS = [...new Set(MANIFEST_DOCS.flatMap((d) => collectKeys(d)))];

function collectKeys(value: Json): string[] {
  if (Array.isArray(value)) return value.flatMap(collectKeys);
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => [k, ...collectKeys(v)]);
  return [];
}

/** One node property or block indicator repeated on a line: `&a &a …`, `!t !t …`, `- - …`, `a: a: …`, `? ? …`. */
function run(dice: Dice): string {
  const unit = dice.pick(['&a ', '!t ', '- ', 'a: ', '? ', '&a !t ', '[', '{a: ']);
  return `kind: Secret\nmetadata:\n  name: ${unit.repeat(dice.size(100_000))}x\n`;
}

function hazard(dice: Dice): string {
  switch (dice.int(7)) {
    case 6: return run(dice);
    case 0: { // alias bomb ("billion laughs")
      const levels = dice.range(4, 12);
      const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      for (let i = 1; i <= levels; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(',')}]`);
      return `apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: bomb\n  annotations:\n${lines.map((l) => `    ${l}`).join('\n')}\n`;
    }
    case 1: { const n = dice.size(100_000); return `apiVersion: v1\nkind: Secret\nmetadata: ${'['.repeat(n)}${']'.repeat(n)}\n`; }
    case 2: { const n = dice.size(600); return `kind: BareMetalHost\nspec:\n${Array.from({ length: n }, (_, i) => `${'  '.repeat(i + 1)}k${i}:`).join('\n')} x\n`; }
    case 3: return 'a: &a\n  b: *a\nkind: BareMetalHost\n';
    case 4: return `apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  big: |\n${'    x\n'.repeat(dice.size(50_000))}`;
    default: return `${'---\n'.repeat(dice.size(5000))}kind: BareMetalHost\n`;
  }
}

/** A body for `rackside apply`: YAML text (or JSON, with `json` true). */
export interface ManifestBody {
  readonly text: string;
  readonly json: boolean;
}

/** A mutated manifest body. */
export function mutateManifestBody(dice: Dice): ManifestBody {
  const roll = dice.int(20);
  if (roll < 8) return { text: mutateText(dice, dice.pick(MANIFEST_TEXTS), { seeds: MANIFEST_TEXTS, tokens: YAML_TOKENS, maxLineChars: 16_384 }), json: false };
  if (roll < 18) {
    // Sizes kept to what YAML parses in a few ms: the huge cases are the hazards' job.
    const options = { seeds: MANIFEST_DOCS, keys: KEYS, maxStringChars: 16_384, maxItems: 2000, maxDepth: 200 };
    const docs = Array.from({ length: dice.range(1, 3) }, () => mutateJson(dice, dice.pick(MANIFEST_DOCS), options));
    if (dice.chance(0.3)) return { text: JSON.stringify(docs.length === 1 ? docs[0] : dice.chance(0.5) ? docs : { kind: 'List', items: docs }), json: true };
    try {
      return { text: docs.map((d) => stringify(d, { aliasDuplicateObjects: false })).join('---\n'), json: false };
    } catch {
      return { text: JSON.stringify(docs), json: false }; // YAML is a superset of JSON
    }
  }
  return { text: hazard(dice), json: false };
}
