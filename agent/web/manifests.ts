/**
 * @module Turning a request body into manifests for `ManagementBackend.apply`: multi-document
 * YAML (`---` separated, as `kubectl apply -f` takes it) or JSON (one object, an array, or a
 * `{ "items": [...] }` list). Syntax errors name the line and column. Documents that are
 * `kind: List` (or `*List`) are expanded; empty documents (a trailing `---`) are skipped.
 * @pure
 */
import { CST, isMap, isScalar, isSeq, Lexer, LineCounter, parseAllDocuments, type Scalar } from 'yaml';
import { ValidationError } from '../errors.js';
import { isJsonObject } from '../json-value.js';

/** Body formats the apply endpoints accept. */
export type ManifestFormat = 'yaml' | 'json';

/** Media types accepted as YAML. `text/plain` and a missing type are read as YAML (a superset of JSON). */
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml', 'text/plain'];

/**
 * Picks the body format from a `Content-Type` header value, or `undefined` when the type is not
 * one the apply endpoints take (the caller answers 415).
 */
export function manifestFormatOf(contentType: string | undefined): ManifestFormat | undefined {
  if (contentType === undefined || contentType.trim() === '') return 'yaml';
  const media = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (media === 'application/json' || media.endsWith('+json')) return 'json';
  if (YAML_TYPES.includes(media) || media.endsWith('+yaml')) return 'yaml';
  return undefined;
}

/** Expands `kind: List`/`*List` documents with `items`, and checks every manifest is a mapping. */
function flatten(values: unknown[]): Record<string, unknown>[] {
  const out: unknown[] = [];
  for (const value of values) {
    const kind = isJsonObject(value) ? value.kind : undefined;
    const isList = isJsonObject(value) && Array.isArray(value.items) && (kind === undefined || (typeof kind === 'string' && kind.endsWith('List')));
    if (isList) out.push(...(value.items as unknown[]));
    else out.push(value);
  }
  if (out.length === 0) throw new ValidationError('body', 'no manifests in the request body');
  return out.map((item, i) => {
    if (isJsonObject(item)) return item;
    const field = out.length === 1 ? 'body' : `items[${i}]`;
    throw new ValidationError(field, 'expected a manifest (a mapping with apiVersion, kind, metadata)');
  });
}

/** Shape limits no real manifest comes near (one anchor and one tag per node; a few levels of `[`/`{` or `- -`). */
const MAX_FLOW_DEPTH = 64;
const MAX_NODE_PROPERTIES = 4;
const MAX_BLOCK_INDICATORS_PER_LINE = 64;

/**
 * Refuses, in one linear pass over yaml's lexer tokens, the shapes that make yaml's parser
 * superlinear (measured on this machine: 150 KiB of `&a ` took 11 s of CPU and 600 KiB 240 s;
 * 500 000 `[` 3.8 s; 200 000 `a: ` on one line 2.2 s), before the parser sees them.
 * @returns what is wrong, or undefined.
 */
function checkYamlShape(text: string): string | undefined {
  let flowDepth = 0;
  let properties = 0;
  let indicators = 0;
  for (const token of new Lexer().lex(text)) {
    const type = CST.tokenType(token);
    if (type === 'anchor' || type === 'tag') {
      if (++properties > MAX_NODE_PROPERTIES) return `more than ${MAX_NODE_PROPERTIES} anchors or tags on one node`;
      continue;
    }
    if (type === 'space' || type === 'comment') continue;
    if (type === 'newline') {
      indicators = 0;
      continue;
    }
    properties = 0;
    if (type === 'flow-map-start' || type === 'flow-seq-start') {
      if (++flowDepth > MAX_FLOW_DEPTH) return `flow collections nested deeper than ${MAX_FLOW_DEPTH} levels`;
    } else if (type === 'flow-map-end' || type === 'flow-seq-end') {
      flowDepth = Math.max(0, flowDepth - 1);
    } else if (flowDepth === 0 && (type === 'seq-item-ind' || type === 'explicit-key-ind' || type === 'map-value-ind')) {
      if (++indicators > MAX_BLOCK_INDICATORS_PER_LINE) return `more than ${MAX_BLOCK_INDICATORS_PER_LINE} collections nested on one line`;
    }
  }
  return undefined;
}

/**
 * The first scalar key repeated within one mapping under `root`, walked iteratively in linear
 * time. yaml's own `uniqueKeys` compares every pair of keys: one 260 KiB mapping took 1.6 s of
 * CPU, a 1 MiB body would block the agent for about half a minute.
 */
function firstDuplicateKey(root: unknown): Scalar | undefined {
  const pending: unknown[] = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const { key, value } of node.items) {
        if (isScalar(key)) {
          if (seen.has(key.value)) return key;
          seen.add(key.value);
        } else pending.push(key);
        pending.push(value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) pending.push(item);
    }
  }
  return undefined;
}

/**
 * Parses a body into its manifests, in document order.
 * @throws ValidationError (field `body`) for malformed YAML/JSON, naming the line and column,
 *   and for a body without manifests or with a non-mapping document.
 */
export function decodeManifests(format: ManifestFormat, text: string): Record<string, unknown>[] {
  if (format === 'json') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new ValidationError('body', `invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    return flatten(Array.isArray(value) ? value : [value]);
  }
  const shape = checkYamlShape(text);
  if (shape !== undefined) throw new ValidationError('body', `invalid YAML: ${shape}`);
  const lineCounter = new LineCounter();
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    // logLevel error: yaml would print a process warning for every mapping used as a key (a request could fill the log).
    docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: false, lineCounter, logLevel: 'error' });
  } catch (err) {
    // yaml's parser recurses per nesting level: ~2000 compact block mappings on one line overflow the stack.
    throw new ValidationError('body', `invalid YAML: ${err instanceof RangeError ? 'nested too deeply' : err instanceof Error ? err.message : String(err)}`);
  }
  if (!Array.isArray(docs)) return flatten([]);
  const values: unknown[] = [];
  docs.forEach((doc, i) => {
    const problem = doc.errors[0];
    if (problem !== undefined) {
      const where = problem.linePos === undefined ? '' : ` at line ${problem.linePos[0].line}, column ${problem.linePos[0].col}`;
      const first = (problem.message.split('\n')[0] ?? problem.code).replace(/ at line \d+, column \d+:?$/, '');
      throw new ValidationError('body', `invalid YAML${where} (document ${i + 1}): ${first}`);
    }
    const duplicate = firstDuplicateKey(doc.contents);
    if (duplicate !== undefined) {
      const pos = lineCounter.linePos(duplicate.range?.[0] ?? 0);
      throw new ValidationError('body', `invalid YAML at line ${pos.line}, column ${pos.col} (document ${i + 1}): Map keys must be unique`);
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // yaml throws a ReferenceError for an alias bomb (maxAliasCount) and for an alias to a
      // later anchor: the user's document is at fault, not the server.
      throw new ValidationError('body', `invalid YAML (document ${i + 1}): ${err instanceof Error ? err.message : String(err)}`);
    }
    if (value !== null && value !== undefined) values.push(value);
  });
  return flatten(values);
}
