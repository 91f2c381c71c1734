import { test } from 'node:test';
import assert from 'node:assert/strict';
import { childLogger, createLogger, isLogLevel, setLogLevel } from '../../agent/log.js';

function capture(): { lines: Record<string, unknown>[]; write(line: string): void } {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
}

test('lines are JSON with a word level, ISO time, name, and host/mac bindings', () => {
  const out = capture();
  const log = createLogger({ level: 'info', name: 'test', destination: out });
  childLogger(log, { host: 'node-3', mac: 'AA-BB-CC-00-11-22' }).info({ bmc: 'ipmi://x' }, 'booted');
  assert.equal(out.lines.length, 1);
  const [line] = out.lines;
  assert.equal(line!.level, 'info');
  assert.equal(line!.name, 'test');
  assert.equal(line!.msg, 'booted');
  assert.equal(line!.host, 'node-3');
  assert.equal(line!.mac, 'aa:bb:cc:00:11:22');
  assert.match(String(line!.time), /^\d{4}-\d\d-\d\dT/);
});

test('secrets are redacted', () => {
  const out = capture();
  const log = createLogger({ level: 'info', destination: out });
  log.info({ password: 'hunter2', bmc: { password: 'x', user: 'admin' }, token: 't' }, 'creds');
  const text = JSON.stringify(out.lines);
  assert.ok(!text.includes('hunter2'));
  assert.deepEqual(out.lines[0]!.bmc, { password: '[redacted]', user: 'admin' });
});

test('setLogLevel changes the level of the root and existing children', () => {
  const out = capture();
  const log = createLogger({ level: 'info', destination: out });
  const child = childLogger(log, { host: 'a' });
  const grandchild = childLogger(child, { mac: '52:54:00:00:00:01' });
  child.debug('hidden');
  setLogLevel(grandchild, 'debug');
  log.debug('root');
  child.debug('child');
  grandchild.debug('grandchild');
  assert.deepEqual(out.lines.map((l) => l.msg), ['root', 'child', 'grandchild']);
  setLogLevel(log, 'silent');
  child.error('gone');
  assert.equal(out.lines.length, 3);
  assert.equal(isLogLevel('warn'), true);
  assert.equal(isLogLevel('loud'), false);
});
