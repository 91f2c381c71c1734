/**
 * The dependency rules of docs/architecture.md, checked over the source tree:
 * 1. bootsvc/, drivers/, images/ never import agent/ or each other;
 * 2. agent/ imports them only through their index.ts;
 * 3. files tagged `@pure` import no I/O module and touch no clock, randomness or process;
 * 4. only agent/main.ts and agent/cli.ts read argv/env, exit or install signal handlers;
 * 5. nothing outside test/ imports test/;
 * 6. file size budgets;
 * 7. the leaf folders' index.ts export only what agent/ imports (bootsvc/index.ts ≤ 60 names);
 * 8. controller/ imports wire/ (through wire/index.ts) and nothing of agent/, bootsvc/, drivers/ or
 *    images/; agent/ imports nothing of controller/ (agent/cli.ts loads controller/main.js lazily).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SOURCE_FOLDERS = ['agent', 'bootsvc', 'drivers', 'images', 'wire', 'controller'] as const;
const LEAF_FOLDERS = new Set(['bootsvc', 'drivers', 'images', 'wire']);
const IO_MODULES = ['dgram', 'net', 'http', 'https', 'http2', 'fs', 'fs/promises', 'child_process', 'timers', 'timers/promises', 'os', 'dns', 'tls', 'worker_threads', 'cluster', 'process', 'readline'];
const IMPURE_CALLS = [/\bprocess\./, /\bsetTimeout\s*\(/, /\bsetInterval\s*\(/, /\bsetImmediate\s*\(/, /\bDate\.now\s*\(/, /new Date\(\s*\)/, /\bMath\.random\s*\(/];
// controller/main.ts owns the process while `rackside controller` serves (its signal handlers).
const PROCESS_OWNERS = new Set(['agent/main.ts', 'agent/cli.ts', 'controller/main.ts']);
const PURE_MAX_LINES = 400;
const MAX_LINES = 800;

interface SourceFile {
  path: string; // repo-relative, forward slashes
  text: string;
  imports: string[];
  /** Specifiers imported by value (not `import type` / `export type`). */
  valueImports: string[];
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

function importsOf(text: string, valueOnly: boolean): string[] {
  const specifiers: string[] = [];
  const pattern = /(?:^|\n)\s*(import|export)\s(type\s)?[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;
  for (const match of text.matchAll(pattern)) {
    if (valueOnly && match[2] !== undefined) continue;
    const specifier = match[3] ?? match[4] ?? match[5];
    if (specifier !== undefined) specifiers.push(specifier);
  }
  return specifiers;
}

const files: SourceFile[] = SOURCE_FOLDERS.flatMap((folder) =>
  walk(join(ROOT, folder)).map((abs) => {
    const text = readFileSync(abs, 'utf8');
    return { path: relative(ROOT, abs).split(sep).join('/'), text, imports: importsOf(text, false), valueImports: importsOf(text, true) };
  }),
);

function topFolder(repoPath: string): string {
  return repoPath.split('/')[0] ?? '';
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return relative(ROOT, resolve(ROOT, dirname(from), specifier)).split(sep).join('/');
}

const isPure = (file: SourceFile): boolean => /^\s*\*\s*@pure\b/m.test(file.text.slice(0, 2000));

test('the tree was found', () => {
  assert.ok(files.length > 10, `found ${files.length} source files under ${ROOT}`);
  assert.ok(files.some(isPure), 'some files are tagged @pure');
});

test('bootsvc, drivers and images import neither agent nor each other', () => {
  const problems: string[] = [];
  for (const file of files) {
    const own = topFolder(file.path);
    if (!LEAF_FOLDERS.has(own)) continue;
    for (const specifier of file.imports) {
      const target = resolveImport(file.path, specifier);
      if (target !== undefined && topFolder(target) !== own) problems.push(`${file.path} imports ${specifier}`);
    }
  }
  assert.deepEqual(problems, []);
});

test('controller imports only wire (through wire/index.ts); agent imports nothing of controller', () => {
  const problems: string[] = [];
  for (const file of files) {
    const own = topFolder(file.path);
    for (const specifier of file.imports) {
      const target = resolveImport(file.path, specifier);
      if (target === undefined) continue;
      const folder = topFolder(target);
      if (own === 'controller' && folder !== 'controller' && target !== 'wire/index.js') problems.push(`${file.path} imports ${specifier}`);
      if (own === 'agent' && folder === 'controller') problems.push(`${file.path} imports ${specifier} (load controller/main.js lazily from agent/cli.ts)`);
    }
  }
  assert.ok(files.some((f) => f.path === 'controller/main.ts'), 'controller/main.ts was found');
  assert.deepEqual(problems, []);
});

test('agent imports bootsvc, drivers, images and wire only through their index.ts', () => {
  const problems: string[] = [];
  for (const file of files.filter((f) => topFolder(f.path) === 'agent')) {
    for (const specifier of file.imports) {
      const target = resolveImport(file.path, specifier);
      if (target === undefined || !LEAF_FOLDERS.has(topFolder(target))) continue;
      if (target !== `${topFolder(target)}/index.js`) problems.push(`${file.path} imports ${specifier} (use ${topFolder(target)}/index.js)`);
    }
  }
  assert.deepEqual(problems, []);
});

test('@pure files import no I/O module and use no clock, randomness or process', () => {
  const problems: string[] = [];
  for (const file of files.filter(isPure)) {
    for (const specifier of file.valueImports) {
      const name = specifier.replace(/^node:/, '');
      if (IO_MODULES.includes(name)) problems.push(`${file.path} imports ${specifier}`);
      const target = resolveImport(file.path, specifier);
      const imported = files.find((f) => target !== undefined && f.path === target.replace(/\.js$/, '.ts'));
      // Same-folder imports must be pure too; another folder's index.ts is governed by the boundary rule.
      if (imported !== undefined && topFolder(imported.path) === topFolder(file.path) && !isPure(imported)) problems.push(`${file.path} imports non-pure ${specifier}`);
    }
    const code = stripComments(file.text);
    for (const pattern of IMPURE_CALLS) if (pattern.test(code)) problems.push(`${file.path} uses ${pattern.source}`);
  }
  assert.deepEqual(problems, []);
});

test('only agent/main.ts and agent/cli.ts read argv/env, exit or handle signals', () => {
  const problems: string[] = [];
  for (const file of files) {
    if (PROCESS_OWNERS.has(file.path)) continue;
    // Handing the inherited environment on to a child process (`{ ...process.env, EXTRA }`) reads no setting.
    const code = stripComments(file.text).replaceAll('...process.env', '');
    for (const pattern of [/\bprocess\.argv\b/, /\bprocess\.env\b/, /\bprocess\.exit\s*\(/, /\bprocess\.on\s*\(\s*['"]SIG/]) {
      if (pattern.test(code)) problems.push(`${file.path} uses ${pattern.source}`);
    }
  }
  assert.deepEqual(problems, []);
});

test('nothing outside test/ imports test/', () => {
  const problems = files.flatMap((file) =>
    file.imports.filter((s) => topFolder(resolveImport(file.path, s) ?? '') === 'test').map((s) => `${file.path} imports ${s}`),
  );
  assert.deepEqual(problems, []);
});

test(`files stay small (pure ≤ ${PURE_MAX_LINES} lines, others ≤ ${MAX_LINES})`, () => {
  const problems: string[] = [];
  for (const file of files) {
    const lines = file.text.split('\n').length;
    const limit = isPure(file) ? PURE_MAX_LINES : MAX_LINES;
    if (lines > limit) problems.push(`${file.path}: ${lines} lines > ${limit}`);
  }
  assert.deepEqual(problems, []);
});

/**
 * Files outside agent/store/ that may still take the whole `Store` (agent/store/types.ts) rather
 * than the owner they need (ResourceStore or one of its readers, EventLog, a sublevel holder),
 * each with why. An entry whose file no longer takes it fails too, so the list stays exact.
 */
const WHOLE_STORE_EXCEPTIONS = new Map<string, string>([
  ['agent/main.ts', 'opens the store and hands each part the owner it needs'],
]);

/** Where `file` names the whole Store type (an import of it, an alias, `import('…').Store`), `Pick<Store, …>` aside. */
function wholeStoreUses(file: SourceFile): string[] {
  const code = stripComments(file.text);
  const isStoreModule = (specifier: string): boolean =>
    ['agent/store/types.js', 'agent/store/index.js', 'agent/store'].includes(resolveImport(file.path, specifier) ?? '');
  const names = new Set<string>();
  const qualifiers = new Set<string>();
  const importPattern = /(?:^|\n)\s*import\s+(?:type\s+)?(?:\{([^}]*)\}|\*\s+as\s+([\w$]+))\s*from\s*['"]([^'"]+)['"]\s*;?/g;
  for (const match of code.matchAll(importPattern)) {
    if (!isStoreModule(match[3] ?? '')) continue;
    if (match[2] !== undefined) qualifiers.add(`${match[2]}.`);
    for (const specifier of (match[1] ?? '').split(',')) {
      const [imported, local] = specifier.replace(/^\s*type\s+/, '').trim().split(/\s+as\s+/);
      if (imported === 'Store') names.add(local ?? imported);
    }
  }
  const body = code.replace(importPattern, '\n');
  const uses: string[] = [];
  for (const match of body.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)\s*\.\s*Store(?![\w$])/g)) {
    if (isStoreModule(match[1] ?? '')) uses.push(match[0]);
  }
  const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const qualifier of qualifiers) if (new RegExp(`(?<![\\w$.])${escape(qualifier)}Store(?![\\w$])`).test(body)) uses.push(`${qualifier}Store`);
  for (const name of names) {
    for (const match of body.matchAll(new RegExp(`(?<![\\w$.])${escape(name)}(?![\\w$])`, 'g'))) {
      if (!/Pick<\s*$/.test(body.slice(Math.max(0, match.index - 20), match.index))) uses.push(name);
    }
  }
  return uses;
}

test('outside agent/store/ only the listed files take the whole Store; the rest take the owner they need', () => {
  const takers = files.filter((f) => !f.path.startsWith('agent/store/') && wholeStoreUses(f).length > 0).map((f) => f.path);
  const unexpected = takers.filter((path) => !WHOLE_STORE_EXCEPTIONS.has(path)).map((path) => `${path} takes the whole Store (take ResourceStore, EventLog, a reader or a sublevel holder from agent/store/types.ts)`);
  const stale = [...WHOLE_STORE_EXCEPTIONS.keys()].filter((path) => !takers.includes(path)).map((path) => `${path} no longer takes the whole Store: drop it from WHOLE_STORE_EXCEPTIONS`);
  assert.deepEqual([...unexpected, ...stale], []);
  // The check finds what it looks for: a parameter, an aliased import, a namespace import and an inline import type.
  const probe = (text: string): number => wholeStoreUses({ path: 'agent/x/y.ts', text, imports: [], valueImports: [] }).length;
  assert.equal(probe("import type { Store } from '../store/types.js';\nexport function f(store: Store): void {}"), 1);
  assert.equal(probe("import type { Store as S } from '../store/index.js';\nconst x: { store: S } = y;"), 1);
  assert.equal(probe("import type * as store from '../store/types.js';\nlet s: store.Store;"), 1);
  assert.equal(probe("let s: import('../store/types.js').Store;"), 1);
  assert.equal(probe("import type { Store, EventLog } from '../store/types.js';\nlet a: Pick<Store, 'getHost'>; let b: EventLog;"), 0);
});

test('the boot intent crosses one seam: agent/boot imports no provisioner and opens no nodes sublevel; main.ts downcasts no provisioner', () => {
  const problems: string[] = [];
  for (const file of files.filter((f) => f.path.startsWith('agent/boot/'))) {
    for (const specifier of file.imports) {
      const target = resolveImport(file.path, specifier);
      if (target?.startsWith('agent/provisioner/') === true) problems.push(`${file.path} imports ${specifier}`);
    }
    if (/\.nodes\b/.test(stripComments(file.text))) problems.push(`${file.path} mentions .nodes (the provisioner's own sublevel)`);
  }
  const main = files.find((f) => f.path === 'agent/main.ts');
  assert.ok(main !== undefined, 'agent/main.ts was found');
  const code = stripComments(main.text);
  if (/\binstanceof\s+(LocalFactory|Fixture|DemoFactory|\w*Provisioner\w*|\w*Factory)\b/.test(code)) problems.push('agent/main.ts downcasts a provisioner with instanceof');
  if (/\blet\s+wake\w*/.test(code)) problems.push('agent/main.ts late-binds a wake callback');
  if (/\.provisioner\s*[!=]==/.test(code)) problems.push('agent/main.ts branches on which provisioner it holds');
  assert.deepEqual(problems, []);
});

/** The names a module exports by name (`export { … } from`, `export const|function|class|interface|type …`); `export *` is listed as `*`. */
function exportedNames(source: ts.SourceFile): string[] {
  const names: string[] = [];
  for (const st of source.statements) {
    if (ts.isExportDeclaration(st)) {
      if (st.exportClause === undefined) names.push('*');
      else if (ts.isNamedExports(st.exportClause)) for (const el of st.exportClause.elements) names.push(el.name.text);
      else names.push(`* as ${st.exportClause.name.text}`);
      continue;
    }
    const exported = ts.canHaveModifiers(st) && (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    if (ts.isVariableStatement(st)) for (const d of st.declarationList.declarations) names.push(d.name.getText(source));
    else if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isEnumDeclaration(st)) && st.name !== undefined) {
      names.push(st.name.text);
    }
  }
  return names;
}

/** The names agent/ files take from `index` (static imports and re-exports, and `x.name` on `const x = await import(index)`). */
function agentImportsOf(index: string): Set<string> {
  const used = new Set<string>();
  for (const file of files.filter((f) => topFolder(f.path) === 'agent')) {
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.ES2022, true);
    for (const st of source.statements) {
      if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || st.moduleSpecifier === undefined || !ts.isStringLiteral(st.moduleSpecifier)) continue;
      if (resolveImport(file.path, st.moduleSpecifier.text) !== index.replace(/\.ts$/, '.js')) continue;
      const bindings = ts.isImportDeclaration(st) ? st.importClause?.namedBindings : st.exportClause;
      if (bindings === undefined) used.add('*');
      else if (ts.isNamedImports(bindings) || ts.isNamedExports(bindings)) for (const el of bindings.elements) used.add((el.propertyName ?? el.name).text);
      else used.add('*');
    }
    for (const m of file.text.matchAll(/const (\w+) = await import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      if (m[1] === undefined || m[2] === undefined || resolveImport(file.path, m[2]) !== index.replace(/\.ts$/, '.js')) continue;
      for (const a of file.text.matchAll(new RegExp(`\\b${m[1]}\\.(\\w+)`, 'g'))) if (a[1] !== undefined) used.add(a[1]);
    }
  }
  return used;
}

test('bootsvc, images and drivers export what the agent uses, and nothing else (bootsvc ≤ 60 names)', () => {
  const problems: string[] = [];
  for (const index of ['bootsvc/index.ts', 'images/index.ts', 'drivers/index.ts']) {
    const file = files.find((f) => f.path === index);
    assert.ok(file !== undefined, `${index} exists`);
    const names = exportedNames(ts.createSourceFile(index, file.text, ts.ScriptTarget.ES2022, true));
    const used = agentImportsOf(index);
    if (used.has('*')) problems.push(`agent/ imports ${index} whole (name what is used)`);
    for (const name of names) {
      if (name.startsWith('*')) problems.push(`${index}: export ${name} (export names, so the surface can be counted)`);
      else if (!used.has(name)) problems.push(`${index} exports ${name}, which agent/ does not use (tests import it from its file)`);
    }
    if (index === 'bootsvc/index.ts' && names.length > 60) problems.push(`${index} exports ${names.length} names (> 60)`);
  }
  assert.deepEqual(problems, []);
});
