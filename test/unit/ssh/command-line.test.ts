/**
 * @module Table tests of shell-like word splitting for exec requests, forced commands and REPL lines.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { joinCommandLine, splitCommandLine } from '../../../agent/ssh/command-line.js';

const cases: Record<string, { line: string; argv?: string[]; error?: RegExp }> = {
  'simple': { line: 'get hosts', argv: ['get', 'hosts'] },
  'extra blanks': { line: '  get \t hosts  ', argv: ['get', 'hosts'] },
  'empty': { line: '', argv: [] },
  'leading rackside is dropped': { line: 'rackside get hosts', argv: ['get', 'hosts'] },
  'rackside later stays': { line: 'describe host rackside', argv: ['describe', 'host', 'rackside'] },
  'single quotes are literal': { line: `annotate host 'a b' 'x\\"y'`, argv: ['annotate', 'host', 'a b', 'x\\"y'] },
  'double quotes with escapes': { line: 'echo "a \\"b\\" \\\\ \\$ \\n"', argv: ['echo', 'a "b" \\ $ \\n'] },
  'adjacent quoted parts join': { line: `a"b c"'d'e`, argv: ['ab cde'] },
  'empty quoted word': { line: `get ''`, argv: ['get', ''] },
  'backslash escapes a blank': { line: 'a\\ b c', argv: ['a b', 'c'] },
  'quoted operators pass': { line: `get hosts '|' ";"`, argv: ['get', 'hosts', '|', ';'] },
  'escaped operator passes': { line: 'x \\;', argv: ['x', ';'] },
  'unterminated single quote': { line: `get 'hosts`, error: /unterminated single quote/ },
  'unterminated double quote': { line: 'get "hosts', error: /unterminated double quote/ },
  'trailing backslash': { line: 'get \\', error: /trailing backslash/ },
  'pipe refused': { line: 'get hosts | grep x', error: /"\|" is not supported/ },
  'redirect refused': { line: 'get hosts > /tmp/x', error: /">" is not supported/ },
  'list refused': { line: 'get hosts; reboot', error: /";" is not supported/ },
  'backtick refused': { line: 'get `id`', error: /"`" is not supported/ },
};

for (const [name, c] of Object.entries(cases)) {
  test(`splitCommandLine: ${name}`, () => {
    const result = splitCommandLine(c.line);
    if (c.argv !== undefined) assert.deepEqual(result, { argv: c.argv });
    else {
      assert.ok('error' in result, JSON.stringify(result));
      assert.match(result.error, c.error ?? /./);
    }
  });
}

test('joinCommandLine quotes what needs quoting and round-trips', () => {
  const argv = ['get', 'host', 'node 1', "it's", '', 'a=b'];
  const line = joinCommandLine(argv);
  assert.equal(line, `get host 'node 1' 'it'\\''s' '' a=b`);
  assert.deepEqual(splitCommandLine(line), { argv });
});
