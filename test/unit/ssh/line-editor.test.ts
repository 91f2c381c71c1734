/**
 * @module Tests of the REPL line discipline: echo, erase, kill, word erase, Ctrl-C, Ctrl-D,
 * CR/LF/CRLF, escape sequences, UTF-8, the line length cap, and plain (no pty) input.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineEditor, MAX_LINE_CHARS } from '../../../agent/ssh/line-editor.js';

test('terminal: echoes, ends lines on CR, and CR LF counts once', () => {
  const e = new LineEditor(true);
  assert.deepEqual(e.feed('get hosts\r\nexit\r'), {
    echo: 'get hosts\r\nexit\r\n',
    events: [{ type: 'line', text: 'get hosts' }, { type: 'line', text: 'exit' }],
  });
  assert.deepEqual(e.feed('\n').events, [], 'LF right after CR (split across feeds) is the same Enter');
  assert.deepEqual(e.feed('a\nb\n').events, [{ type: 'line', text: 'a' }, { type: 'line', text: 'b' }], 'bare LF (piped into ssh -tt) is Enter');
});

test('terminal: backspace and DEL erase one character, Ctrl-U the line, Ctrl-W a word', () => {
  const e = new LineEditor(true);
  const r = e.feed('gett\x7f hosts\b\bts\r');
  assert.deepEqual(r.events, [{ type: 'line', text: 'get hosts' }]);
  assert.ok(r.echo.includes('\b \b'));
  assert.deepEqual(e.feed('junk\x15get\r').events, [{ type: 'line', text: 'get' }]);
  assert.deepEqual(e.feed('get hosts  \x17nodes\r').events, [{ type: 'line', text: 'get nodes' }]);
  assert.equal(e.feed('\x7f').echo, '', 'nothing to erase on an empty line');
});

test('terminal: Ctrl-C cancels the line, Ctrl-D ends only on an empty line', () => {
  const e = new LineEditor(true);
  assert.deepEqual(e.feed('half\x03'), { echo: 'half^C\r\n', events: [{ type: 'interrupt' }] });
  assert.deepEqual(e.feed('x\x04').events, [], 'Ctrl-D with text is ignored');
  assert.deepEqual(e.feed('\x15\x04').events, [{ type: 'eof' }]);
});

test('terminal: arrow keys and other escape sequences are swallowed, tabs become blanks', () => {
  const e = new LineEditor(true);
  const r = e.feed('ge\x1b[At\x1bOB\x1b[1;5C\tx\r');
  assert.deepEqual(r.events, [{ type: 'line', text: 'get x' }]);
  assert.equal(r.echo, 'get x\r\n');
});

test('terminal: multi-byte characters erase as one', () => {
  const e = new LineEditor(true);
  assert.deepEqual(e.feed('nœud😀\x7f\r').events, [{ type: 'line', text: 'nœud' }]);
});

test('terminal: lines are capped and the bell rings', () => {
  const e = new LineEditor(true);
  const r = e.feed(`${'x'.repeat(MAX_LINE_CHARS + 3)}\r`);
  assert.equal((r.events[0] as { text: string }).text.length, MAX_LINE_CHARS);
  assert.equal(r.echo.split('\x07').length - 1, 3);
});

test('plain: no echo, LF ends lines, a trailing CR is dropped, control characters are data', () => {
  const e = new LineEditor(false);
  assert.deepEqual(e.feed('get hosts\r\nx\x03y\n'), {
    echo: '',
    events: [{ type: 'line', text: 'get hosts' }, { type: 'line', text: 'x\x03y' }],
  });
  e.feed('partial');
  assert.deepEqual(e.end(), [{ type: 'line', text: 'partial' }, { type: 'eof' }], 'a last line without LF still runs');
});
