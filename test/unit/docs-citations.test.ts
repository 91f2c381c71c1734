/**
 * The repository explains itself (docs/architecture.md, docs/README.md):
 * - no tracked text file cites a document that lives outside the repository (the old design
 *   brief, the reference notes, absolute paths of the machine it was written on);
 * - every path-like token under a top-level source or docs folder (`agent/…`, `bootsvc/…`,
 *   `docs/…`, `test/…`, …) names a file or folder that exists;
 * - a section cited by name after a docs path (`docs/<doc>.md, "Section"`) is a heading or a bold
 *   lead of that document;
 * - docs/ describes the product as it is: no numbered work periods, no lettered runs (the
 *   history is `git log`).
 * Files come from `git ls-files`; package-lock.json and binary files are skipped.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SKIPPED = new Set(['package-lock.json']);
/** Top-level folders whose paths are checked for existence. */
const FOLDERS = ['agent', 'bootsvc', 'drivers', 'images', 'wire', 'controller', 'native', 'test', 'docs', 'scripts', 'systemd'];

// Built from pieces so that this file does not match its own patterns.
const md = '\\.md\\b';
const OUTSIDE: { name: string; pattern: RegExp }[] = [
  { name: 'the design brief', pattern: new RegExp(`\\bDESIGN${md}`) },
  { name: 'a reference note', pattern: new RegExp(`\\breference/[\\w.-]*${md}`) },
  { name: 'a reference note', pattern: new RegExp(`(?<![\\w/-])(?:peers|deps|metal3|anchors|aesthetics)${md}`) },
  { name: 'the style notes', pattern: new RegExp(`\\baesthetics §`) },
  { name: 'an absolute path of the work machine', pattern: new RegExp(['', 'work', ''].join('/')) },
  { name: 'a folder outside the repository', pattern: new RegExp(['shared', 'folder'].join(' '), 'i') },
];
const DIARY: { name: string; pattern: RegExp }[] = [
  { name: 'a numbered work period', pattern: /\b[Ss]ession \d+/ },
  { name: 'a lettered run', pattern: /\brun [A-Z]\b/ },
  { name: 'a work period', pattern: /\bwork period/i },
];
const PATH_TOKEN = new RegExp(`(?<![\\w./@$~-])((?:${FOLDERS.join('|')})/[\\w./-]*)`, 'g');

interface TextFile {
  path: string;
  lines: string[];
}

function trackedTextFiles(): TextFile[] {
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0');
  return listed.flatMap((path) => {
    if (path === '' || SKIPPED.has(path) || !existsSync(join(ROOT, path))) return [];
    const bytes = readFileSync(join(ROOT, path));
    if (bytes.subarray(0, 8000).includes(0)) return [];
    return [{ path, lines: bytes.toString('utf8').split('\n') }];
  });
}

/** Whether `token` (a repo-relative path as written) names something in the tree. */
function exists(token: string): boolean {
  const path = token.replace(/[./-]+$/, '');
  if (existsSync(join(ROOT, path))) return true;
  // Compiled names of TypeScript sources (`foo.js` for `foo.ts`, `.mjs` for `.mts`).
  const source = path.replace(/\.js$/, '.ts').replace(/\.mjs$/, '.mts');
  return source !== path && existsSync(join(ROOT, source));
}

/** Code files: only their comment lines cite (string literals are run-time paths, test data). */
const CODE_FILE = /\.(?:[cm]?[jt]s|sh|c|h|gyp)$/;
const COMMENT_LINE = /^\s*(?:\/\/|\/\*|\*|#)/;

/** Whether `line` of `file` is prose that may cite repository paths. */
function citesPaths(file: TextFile, line: string): boolean {
  return !CODE_FILE.test(file.path) || COMMENT_LINE.test(line);
}

/** Path tokens of `line` that are whole paths: not a glob, template or brace list. */
function pathTokens(line: string): string[] {
  const tokens: string[] = [];
  for (const match of line.matchAll(PATH_TOKEN)) {
    const token = match[1];
    const next = line[match.index + match[0].length] ?? '';
    if (token === undefined || (next !== '' && '*{<$'.includes(next))) continue;
    tokens.push(token);
  }
  return tokens;
}

const files = trackedTextFiles();

test('the tracked files are found', () => {
  assert.ok(files.some((f) => f.path === 'docs/architecture.md'), 'docs/architecture.md is tracked');
  assert.ok(files.length > 500, `only ${files.length} tracked text files`);
});

test('no tracked file cites a document outside the repository', () => {
  const found: string[] = [];
  for (const file of files) {
    file.lines.forEach((line, i) => {
      for (const { name, pattern } of OUTSIDE) if (pattern.test(line)) found.push(`${file.path}:${i + 1}: ${name}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
});

test('every cited repository path exists', () => {
  const missing: string[] = [];
  for (const file of files) {
    file.lines.forEach((line, i) => {
      if (!citesPaths(file, line)) return;
      for (const token of pathTokens(line)) if (!exists(token)) missing.push(`${file.path}:${i + 1}: ${token}`);
    });
  }
  assert.deepEqual(missing, []);
});

/** The headings and bold leads (`**Lead.**`, `- **Lead**`) of a Markdown text, whitespace collapsed. */
function sectionNames(text: string): string[] {
  const names = [...text.matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1] ?? '');
  names.push(...[...text.matchAll(/\*\*([^*]+)\*\*/g)].map((m) => m[1] ?? ''));
  return names.map((name) => name.replace(/\s+/g, ' ').trim());
}

/** `docs/<doc>.md, "A"` and `docs/<doc>.md: "A", "B"` citations of `text`, comment continuations joined. */
function sectionCitations(text: string): { doc: string; section: string }[] {
  const joined = text.replace(/\n\s*(?:\*|\/\/|#)?\s*/g, ' ');
  const citations: { doc: string; section: string }[] = [];
  for (const match of joined.matchAll(/(docs\/[\w.-]+\.md)[,:] ((?:"[^"]+"(?:[ ,;]+|and |to |→ )*)+)/g)) {
    for (const quoted of (match[2] ?? '').matchAll(/"([^"]+)"/g)) citations.push({ doc: match[1] ?? '', section: (quoted[1] ?? '').trim() });
  }
  return citations;
}

test('every section cited by name exists in its document', () => {
  const sections = new Map(files.filter((f) => f.path.endsWith('.md')).map((f) => [f.path, sectionNames(f.lines.join('\n'))]));
  const missing: string[] = [];
  for (const file of files) {
    for (const { doc, section } of sectionCitations(file.lines.join('\n'))) {
      const names = sections.get(doc);
      if (names !== undefined && !names.some((name) => name.startsWith(section))) missing.push(`${file.path}: ${doc}, "${section}"`);
    }
  }
  assert.deepEqual(missing, []);
});

test('docs/ holds no diary', () => {
  const found: string[] = [];
  for (const file of files.filter((f) => f.path.startsWith('docs/'))) {
    file.lines.forEach((line, i) => {
      for (const { name, pattern } of DIARY) if (pattern.test(line)) found.push(`${file.path}:${i + 1}: ${name}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
});
