/**
 * Config `governor` (agent/config-governor.ts): decoding and its errors, and the budgets the
 * agent derives from it (agent/boot/governor.ts `governorLimits`, `httpMbps: auto` from the
 * link speed).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { decodeConfig, parseConfigYaml, type ConfigProblem } from '../../agent/config.js';
import { governorLimits } from '../../agent/boot/governor.js';
import { configProblems } from '../helpers/config-problems.js';

const defaults = { agentId: 'rack-a' };

function problemsOf(input: unknown): ConfigProblem[] {
  return configProblems(input, defaults);
}

test('no governor section, or one that sets nothing, is no governor', () => {
  assert.equal(decodeConfig({}, defaults).governor, undefined);
  assert.equal(decodeConfig({ governor: null }, defaults).governor, undefined);
  assert.equal(decodeConfig({ governor: {} }, defaults).governor, undefined);
  assert.equal(decodeConfig({ governor: { dhcpPerSecond: null } }, defaults).governor, undefined);
});

test('every key decodes', () => {
  assert.deepEqual(decodeConfig({ governor: { httpMbps: 800, dhcpPerSecond: 20, bootsPerMinute: 30 } }, defaults).governor, { httpMbps: 800, dhcpPerSecond: 20, bootsPerMinute: 30 });
  assert.deepEqual(decodeConfig({ provisioning: { interface: 'eth1' }, governor: { httpMbps: 'auto' } }, defaults).governor, { httpMbps: 'auto' });
  assert.deepEqual(decodeConfig({ governor: { dhcpPerSecond: 0.5 } }, defaults).governor, { dhcpPerSecond: 0.5 });
});

const bad: Record<string, { input: unknown; path: string; expected: RegExp }> = {
  'zero bandwidth': { input: { governor: { httpMbps: 0 } }, path: 'governor.httpMbps', expected: /greater than 0, or auto/ },
  'bandwidth as text': { input: { governor: { httpMbps: '1 Gbit' } }, path: 'governor.httpMbps', expected: /Mbit\/s/ },
  'auto without a provisioning interface': { input: { governor: { httpMbps: 'auto' } }, path: 'governor.httpMbps', expected: /auto needs provisioning\.interface/ },
  'negative DHCP rate': { input: { governor: { dhcpPerSecond: -1 } }, path: 'governor.dhcpPerSecond', expected: /greater than 0/ },
  'boots per minute as text': { input: { governor: { bootsPerMinute: 'ten' } }, path: 'governor.bootsPerMinute', expected: /greater than 0/ },
  'misspelled key': { input: { governor: { httpMpbs: 100 } }, path: 'governor.httpMpbs', expected: /did you mean httpMbps/ },
  'not a mapping': { input: { governor: 'on' }, path: 'governor', expected: /a mapping with keys httpMbps, dhcpPerSecond, bootsPerMinute/ },
};
for (const [name, c] of Object.entries(bad)) {
  test(`refused: ${name}`, () => {
    const problems = problemsOf(c.input);
    assert.equal(problems.length, 1, JSON.stringify(problems));
    assert.equal(problems[0]?.path, c.path);
    assert.match(problems[0].expected, c.expected);
  });
}

test('budgets: Mbit/s become bytes per second; auto takes 90 % of the link speed, or warns when it is unknown', async () => {
  assert.equal(await governorLimits(undefined, 'eth1'), undefined);
  assert.deepEqual(await governorLimits({ httpMbps: 800, dhcpPerSecond: 20, bootsPerMinute: 30 }, undefined), {
    limits: { httpBytesPerSecond: 100_000_000, dhcpPerSecond: 20, powerOnsPerMinute: 30 },
  });
  const speeds: Record<string, number | undefined> = { eth1: 10_000, eth2: undefined };
  const read = (iface: string): Promise<number | undefined> => Promise.resolve(speeds[iface]);
  assert.deepEqual(await governorLimits({ httpMbps: 'auto' }, 'eth1', read), { limits: { httpBytesPerSecond: 1_125_000_000 } });
  const unknown = await governorLimits({ httpMbps: 'auto', dhcpPerSecond: 5 }, 'eth2', read);
  assert.deepEqual(unknown?.limits, { dhcpPerSecond: 5 });
  assert.match(unknown.warning!, /link speed of eth2 is unknown; no boot HTTP budget/);
});

test('docs/rackside.example.yaml documents every governor key, and its commented example decodes', () => {
  const text = readFileSync(new URL('../../../docs/rackside.example.yaml', import.meta.url), 'utf8');
  const lines = text.split('\n');
  const start = lines.indexOf('# governor:');
  assert.ok(start >= 0, 'a commented governor section');
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('#')) break;
    if (!line.startsWith('#   #')) block.push(line.slice(2));
  }
  const governor = parseConfigYaml(['provisioning:', '  interface: eth1', ...block].join('\n'), 'example', defaults).governor;
  assert.deepEqual(Object.keys(governor ?? {}).sort(), ['bootsPerMinute', 'dhcpPerSecond', 'httpMbps']);
});
