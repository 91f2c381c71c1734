/**
 * jsonEqual answers what comparing key-sorted JSON.stringify output answered (the reconciler's
 * former sameJson), without building the strings.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isJsonObject, jsonEqual } from '../../agent/json-value.js';
import { makeHost } from './store/fixtures.js';

/** The former definition: the reference the fast comparison must agree with. */
function canonicalEqual(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): string | undefined =>
    JSON.stringify(value, (_key, v: unknown) => {
      if (!isJsonObject(v)) return v;
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) sorted[key] = v[key];
      return sorted;
    });
  return canonical(a) === canonical(b);
}

test('jsonEqual: the cases JSON.stringify decides', () => {
  const cases: [unknown, unknown, boolean][] = [
    [{ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }, true],
    [{ a: 1, b: undefined }, { a: 1 }, true],
    [{ a: null }, { a: undefined }, false],
    [{ a: null }, {}, false],
    [[undefined, 1], [null, 1], true],
    [[1, 2], [2, 1], false],
    [[1], { 0: 1 }, false],
    [[], {}, false],
    [Number.NaN, null, true],
    [Number.POSITIVE_INFINITY, Number.NaN, true],
    [undefined, null, false],
    [undefined, undefined, true],
    ['1', 1, false],
    [true, 'true', false],
    [{ a: { b: { c: [1, { d: 'x' }] } } }, { a: { b: { c: [1, { d: 'x' }] } } }, true],
    [{ a: { b: { c: [1, { d: 'x' }] } } }, { a: { b: { c: [1, { d: 'y' }] } } }, false],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: 1, b: 2 }, { a: 1 }, false],
  ];
  for (const [a, b, expected] of cases) {
    assert.equal(jsonEqual(a, b), expected, `${show(a)} vs ${show(b)}`);
    assert.equal(jsonEqual(b, a), expected, 'symmetric');
    assert.equal(canonicalEqual(a, b), expected, 'the reference agrees with the table');
  }
});

test('jsonEqual agrees with the key-sorted JSON.stringify comparison on 2000 random values', () => {
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const leaves: unknown[] = [null, undefined, 0, 1, -1, 'a', 'b', '', true, false, Number.NaN];
  const make = (depth: number): unknown => {
    const pick = random();
    if (depth === 0 || pick < 0.4) return leaves[Math.floor(random() * leaves.length)];
    if (pick < 0.7) return Array.from({ length: Math.floor(random() * 3) }, () => make(depth - 1));
    const object: Record<string, unknown> = {};
    for (const key of ['x', 'y', 'z']) if (random() < 0.6) object[key] = make(depth - 1);
    return object;
  };
  let equalPairs = 0;
  for (let i = 0; i < 2000; i++) {
    const a = make(3);
    // Half the pairs start from a copy with keys in another order, so equal pairs are common.
    const b = random() < 0.5 ? reordered(a) : make(3);
    const expected = canonicalEqual(a, b);
    if (expected) equalPairs++;
    assert.equal(jsonEqual(a, b), expected, `${show(a)} vs ${show(b)}`);
  }
  assert.ok(equalPairs > 500, `enough equal pairs to mean something (${equalPairs})`);
});

test('jsonEqual on a stored host: a parsed copy is equal, one changed field is not', () => {
  const host = makeHost('h1');
  const copy = JSON.parse(JSON.stringify(host)) as typeof host;
  assert.ok(jsonEqual(host, copy));
  copy.spec.online = !host.spec.online;
  assert.ok(!jsonEqual(host, copy));
});

/** JSON text for a message (`JSON.stringify(undefined)` gives no string). */
function show(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value);
}

function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (!isJsonObject(value)) return value;
  return Object.fromEntries(Object.keys(value).reverse().map((key) => [key, reordered(value[key])]));
}
