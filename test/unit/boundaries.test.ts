/**
 * DESIGN.md's dependency rules, checked over the source tree:
 * 1. bootsvc/, drivers/, images/ never import agent/ or each other;
 * 2. agent/ imports them only through their index.ts;
 * 3. files tagged `@pure` import no I/O module and touch no clock, randomness or process;
 * 4. only agent/main.ts and agent/cli.ts read argv/env, exit or install signal handlers;
 * 5. nothing outside test/ imports test/;
 * 6. file size budgets;
 * 7. the leaf folders' index.ts export only what agent/ imports (bootsvc/index.ts ≤ 60 names).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SOURCE_FOLDERS = ['agent', 'bootsvc', 'drivers', 'images'] as const;
const LEAF_FOLDERS = new Set(['bootsvc', 'drivers', 'images']);
const IO_MODULES = ['dgram', 'net', 'http', 'https', 'http2', 'fs', 'fs/promises', 'child_process', 'timers', 'timers/promises', 'os', 'dns', 'tls', 'worker_threads', 'cluster', 'process', 'readline'];
const IMPURE_CALLS = [/\bprocess\./, /\bsetTimeout\s*\(/, /\bsetInterval\s*\(/, /\bsetImmediate\s*\(/, /\bDate\.now\s*\(/, /new Date\(\s*\)/, /\bMath\.random\s*\(/];
const PROCESS_OWNERS = new Set(['agent/main.ts', 'agent/cli.ts']);
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

test('agent imports bootsvc, drivers and images only through their index.ts', () => {
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
 * Names of the boot seam (`bootsvc/boot-lookup.ts`, `ipxe/boot-plan.ts`, `ipxe/boot-files.ts`)
 * that bootsvc/index.ts still exports without the agent importing them; the merge of the two
 * boot seams into one removes them, and this list with them.
 */
const BOOT_SEAM_PENDING = new Set([
  'BootTransport', 'ClientArch', 'FirmwareKind', 'LeaseState', 'LiveIsoPlan', 'LocalDiskPlan', 'NothingPlan', 'RamdiskPlan',
  'BootChain', 'BootFileName', 'BootFileOptions', 'chooseBootChain', 'firstStageFile',
]);

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
      else if (!used.has(name) && !(index === 'bootsvc/index.ts' && BOOT_SEAM_PENDING.has(name))) problems.push(`${index} exports ${name}, which agent/ does not use (tests import it from its file)`);
    }
    if (index === 'bootsvc/index.ts' && names.length > 60) problems.push(`${index} exports ${names.length} names (> 60)`);
  }
  assert.deepEqual(problems, []);
});
