/**
 * @module Structure-aware mutations of JSON values (Redfish bodies, ramdisk callbacks, API
 * bodies, manifests, controller answers): drop, duplicate and retype fields; huge strings,
 * extreme numbers (what `JSON.parse` can yield: ±Infinity from `1e999`, -0, 2^53+), deep
 * nesting, wide objects and arrays, unicode oddities (lone surrogates, RTL override, BOM,
 * U+2028), NUL, own `__proto__`/`constructor` keys (as `JSON.parse` creates them), enum words
 * and splices of subtrees from other seeds. Plus text-level mutations of serialized JSON
 * (truncation, stray bytes, duplicate keys, nesting far beyond what an object tree can carry).
 */
import type { Dice } from './dice.js';
import { mutateBytes } from './mutate-bytes.js';

/** A JSON value (with the non-finite numbers `JSON.parse('1e999')` produces). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What a JSON mutator may draw on. */
export interface JsonMutationOptions {
  /** Real bodies of the same kind, for splices. */
  readonly seeds: readonly Json[];
  /** Field names worth adding (the schema's keys). */
  readonly keys?: readonly string[];
  /** String values worth trying (enum words, paths, URLs). */
  readonly strings?: readonly string[];
  /** Largest huge string; default 256 Ki characters. */
  readonly maxStringChars?: number;
  /** Most keys or items of a wide object or array; default 20 000. */
  readonly maxItems?: number;
  /** Deepest nesting built as objects; default 1000 (structuredClone and JSON.stringify must still copy it). */
  readonly maxDepth?: number;
}

/** Numbers that break range checks, integer checks and arithmetic. */
export const EXTREME_NUMBERS: readonly number[] = [
  0, -0, 1, -1, 0.5, -0.5, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 2 ** 64, -(2 ** 63), 1e308, -1e308, 5e-324,
  Number.MAX_VALUE, Infinity, -Infinity, 65535, 65536, 255, 256, 3600, 86_401, 1e21,
];

/** Strings that break parsers and printers: unicode edge cases, NUL, separators, paths, numbers as text. */
export const ODD_STRINGS: readonly string[] = [
  '', ' ', '\0', 'a\0b', '\ud800', '\udfff', 'x\ud83d', '\u202eevil', '\ufeff', '\u2028\u2029', 'é', 'e\u0301', '😀'.repeat(3),
  '\u0000\u0001\u001f\u007f', '\r\n', '\n', '../../etc/passwd', '/', '%00', '${x}', '{{x}}', '<html>', 'null', 'true', '-0', '1e999',
  'NaN', 'Infinity', ' 12 ', '0x10', '1_000', '٣', 'ⅷ', 'ＡＢＣ', '__proto__', 'constructor', 'toString', 'hasOwnProperty',
];

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'] as const;

interface Slot {
  readonly parent: Json[] | { [key: string]: Json } | undefined;
  readonly key: string | number;
  readonly value: Json;
  readonly depth: number;
}

function isObject(v: unknown): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Slots of `root` (breadth-first, bounded), the root itself first. */
function slotsOf(root: Json, maxSlots = 4000, maxDepth = 24): Slot[] {
  const out: Slot[] = [{ parent: undefined, key: '', value: root, depth: 0 }];
  for (let i = 0; i < out.length && out.length < maxSlots; i++) {
    const s = out[i] as Slot;
    if (s.depth >= maxDepth) continue;
    if (Array.isArray(s.value)) s.value.forEach((v, k) => out.push({ parent: s.value as Json[], key: k, value: v, depth: s.depth + 1 }));
    else if (isObject(s.value)) for (const [k, v] of Object.entries(s.value)) out.push({ parent: s.value, key: k, value: v, depth: s.depth + 1 });
  }
  return out;
}

/** Sets an own property (also `__proto__`, which plain assignment would turn into a prototype change). */
function define(target: { [key: string]: Json }, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

function hugeString(dice: Dice, max: number): string {
  const unit = dice.pick(['A', 'é', '😀', '\0', ' ', '\\', '"', '%', 'ab', '\ud800']);
  return unit.repeat(Math.max(1, Math.ceil(dice.size(max) / unit.length)));
}

function deep(dice: Dice, depth: number): Json {
  let v: Json = dice.chance(0.5) ? null : 'leaf';
  const arrays = dice.chance(0.5);
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
}

function oddString(dice: Dice, o: JsonMutationOptions): string {
  if (o.strings !== undefined && o.strings.length > 0 && dice.chance(0.5)) return dice.pick(o.strings);
  return dice.pick(ODD_STRINGS);
}

/** A random value, of a random type. */
export function randomJson(dice: Dice, o: JsonMutationOptions, depth = 0): Json {
  switch (dice.int(depth > 2 ? 5 : 7)) {
    case 0: return null;
    case 1: return dice.chance(0.5);
    case 2: return dice.pick(EXTREME_NUMBERS);
    case 3: return oddString(dice, o);
    case 4: return dice.int(100);
    case 5: return Array.from({ length: dice.int(4) }, () => randomJson(dice, o, depth + 1));
    default: {
      const obj: { [key: string]: Json } = {};
      for (let i = dice.int(4); i > 0; i--) define(obj, dice.pick(o.keys ?? ['a']), randomJson(dice, o, depth + 1));
      return obj;
    }
  }
}

function retype(dice: Dice, v: Json, o: JsonMutationOptions): Json {
  for (let tries = 0; tries < 8; tries++) {
    const next = randomJson(dice, o);
    if (typeof next !== typeof v || Array.isArray(next) !== Array.isArray(v)) return next;
  }
  return v === null ? 0 : null;
}

function tweakString(dice: Dice, s: string): string {
  switch (dice.int(6)) {
    case 0: return s.slice(0, dice.int(s.length + 1));
    case 1: return dice.chance(0.5) ? s.toUpperCase() : s.toLowerCase();
    case 2: return ` ${s}\t`;
    case 3: { const at = dice.int(s.length + 1); return `${s.slice(0, at)}${dice.pick(ODD_STRINGS)}${s.slice(at)}`; }
    case 4: return s.repeat(dice.range(2, 50));
    default: return `${s}/${s}`;
  }
}

function spliceFrom(dice: Dice, o: JsonMutationOptions): Json {
  const seed = dice.pick(o.seeds);
  return structuredClone(dice.pick(slotsOf(seed, 500, 8)).value);
}

function mutateSlot(dice: Dice, root: Json, o: JsonMutationOptions): Json {
  const slots = slotsOf(root);
  const s = dice.pick(slots);
  let replacement: Json;
  const { parent, key, value } = s;
  switch (dice.int(15)) {
    case 0: // drop the field
      if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
      else if (parent !== undefined && typeof key === 'string') Reflect.deleteProperty(parent, key);
      return root;
    case 1: // duplicate: under another (known) name, or as more array items
      if (Array.isArray(parent)) {
        const scalar = typeof value !== 'object' || value === null;
        for (let n = scalar && dice.chance(0.2) ? dice.size(o.maxItems ?? 5000) : 1; n > 0; n--) parent.push(structuredClone(value));
      } else if (parent !== undefined) {
        define(parent, dice.chance(0.5) && o.keys !== undefined && o.keys.length > 0 ? dice.pick(o.keys) : `${String(key)}${dice.pick(['', '_', 'X', ' '])}`, structuredClone(value));
      }
      return root;
    case 2: replacement = retype(dice, value, o); break;
    case 3: replacement = hugeString(dice, o.maxStringChars ?? 256 * 1024); break;
    case 4: replacement = dice.pick(EXTREME_NUMBERS); break;
    case 5: replacement = deep(dice, dice.size(o.maxDepth ?? 1000)); break;
    case 6: // unicode / NUL in a string value, or in the key
    case 7:
      if (typeof value === 'string') replacement = tweakString(dice, value);
      else if (isObject(parent) && typeof key === 'string' && dice.chance(0.5)) {
        Reflect.deleteProperty(parent, key);
        define(parent, `${key}${dice.pick(['\0', '\u200b', 'é', '\ud800', ' '])}`, value);
        return root;
      } else replacement = dice.pick(ODD_STRINGS);
      break;
    case 8: { // own prototype-ish keys
      const target = isObject(value) ? value : isObject(parent) ? parent : undefined;
      if (target !== undefined) define(target, dice.pick(PROTO_KEYS), randomJson(dice, o));
      return root;
    }
    case 9: replacement = spliceFrom(dice, o); break;
    case 10: replacement = oddString(dice, o); break;
    case 11: replacement = dice.pick<Json>([null, [], {}, '', 0, false]); break;
    case 12: // wide: many keys or many items
      if (dice.chance(0.5)) {
        const wide: { [key: string]: Json } = {};
        for (let i = dice.size(o.maxItems ?? 20_000); i > 0; i--) wide[`k${i}`] = i;
        replacement = wide;
      } else replacement = Array.from({ length: dice.size(o.maxItems ?? 20_000) }, (_, i) => (i % 3 === 0 ? null : i));
      break;
    case 13: // add an unexpected field
      if (isObject(value)) {
        define(value, dice.chance(0.5) && o.keys !== undefined && o.keys.length > 0 ? dice.pick(o.keys) : dice.pick(ODD_STRINGS), randomJson(dice, o));
        return root;
      }
      replacement = retype(dice, value, o);
      break;
    default: // numbers as strings and the reverse (real BMCs do both)
      replacement = typeof value === 'number' ? String(value) : typeof value === 'string' && /^-?[0-9.]+$/.test(value) ? Number(value) : retype(dice, value, o);
  }
  if (parent === undefined) return replacement;
  if (Array.isArray(parent)) parent[key as number] = replacement;
  else define(parent, key as string, replacement);
  return root;
}

/** A mutated deep copy of `input`: 1–4 stacked structure-aware mutations. */
export function mutateJson(dice: Dice, input: Json, options: JsonMutationOptions): Json {
  let root = structuredClone(input);
  for (let rounds = dice.range(1, 4); rounds > 0; rounds--) root = mutateSlot(dice, root, options);
  return root;
}

const JSON_TOKENS = ['{', '}', '[', ']', '"', ',', ':', '1e999', '-0', 'null', '\\u0000', '\\ud800', '\\', '\u00ff', '{"a":', '[[[['].map((t) => Buffer.from(t, 'utf8'));

/**
 * A mutated serialized JSON text: mostly the structure-aware mutation serialized, sometimes
 * with byte damage, truncation, a BOM, a duplicated key, or nesting deeper than any object tree.
 */
export function mutateJsonText(dice: Dice, input: Json, options: JsonMutationOptions): string {
  const mutated = mutateJson(dice, input, options);
  if (dice.chance(0.1)) { // nesting far deeper than an object tree can carry, at a value inside the body
    const marker = '\u0000deep\u0000';
    const slots = slotsOf(mutated).filter((s) => s.parent !== undefined);
    if (slots.length > 0) {
      const s = dice.pick(slots);
      if (Array.isArray(s.parent)) s.parent[s.key as number] = marker;
      else if (s.parent !== undefined) define(s.parent, s.key as string, marker);
      const n = dice.size(200_000);
      const open = dice.chance(0.5) ? '[' : '{"a":';
      const close = open === '[' ? ']' : '}';
      return JSON.stringify(mutated).replace(JSON.stringify(marker), `${open.repeat(n)}0${close.repeat(n)}`);
    }
  }
  const text = JSON.stringify(mutated);
  switch (dice.int(10)) {
    case 0: return mutateBytes(dice, Buffer.from(text, 'utf8'), { seeds: options.seeds.map((s) => Buffer.from(JSON.stringify(s))), tokens: JSON_TOKENS, maxBytes: text.length + 4096 }).toString('utf8');
    case 1: return text.slice(0, dice.int(text.length + 1));
    case 2: { const n = dice.size(200_000); return `${'['.repeat(n)}${text}${']'.repeat(n)}`; }
    case 3: return `\ufeff${text}`;
    case 4: { const at = text.indexOf('{'); return at < 0 ? text : `${text.slice(0, at + 1)}"${dice.pick(options.keys ?? ['a'])}":${JSON.stringify(randomJson(dice, options))},${text.slice(at + 1)}`; }
    default: return text;
  }
}

/** JSON of `value` cut to `maxChars` for failure messages; never throws (deep values are summarized). */
export function showJson(value: unknown, maxChars = 2000): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : JSON.stringify(value);
  } catch (err) {
    text = `(not serializable: ${err instanceof Error ? err.message : String(err)})`;
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}… (${text.length} characters)` : text;
}
