/**
 * @module A tiny JSON Schema 2020-12 checker for the keywords docs/sync-summary.schema.json
 * uses (type, const, enum, required, properties, additionalProperties, items, oneOf, $ref into
 * $defs, minimum, minLength, maxLength, maxItems, maxProperties). Unknown keywords fail loudly,
 * so the schema cannot silently outgrow the checker.
 */

/** A schema node (loosely typed: the checker validates what it reads). */
export type SchemaNode = Record<string, unknown>;

const KNOWN = new Set([
  '$schema', '$id', 'title', 'description', '$defs', 'format',
  'type', 'const', 'enum', 'required', 'properties', 'additionalProperties', 'items', 'oneOf', '$ref',
  'minimum', 'minLength', 'maxLength', 'maxItems', 'maxProperties',
]);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

/** Every violation of `schema` by `value`, as `path: problem` strings (empty = valid). */
export function checkSchema(root: SchemaNode, value: unknown): string[] {
  return checkNode(root, root, value, '$');
}

function checkNode(root: SchemaNode, start: SchemaNode, value: unknown, startPath: string): string[] {
  const problems: string[] = [];
  const resolve = (ref: string): SchemaNode => {
    const m = /^#\/\$defs\/(\w+)$/.exec(ref);
    const defs = root.$defs as Record<string, SchemaNode> | undefined;
    const target = m === null ? undefined : defs?.[m[1]!];
    if (target === undefined) throw new Error(`unresolvable $ref ${ref}`);
    return target;
  };
  const visit = (node: SchemaNode, v: unknown, path: string): void => {
    for (const key of Object.keys(node)) if (!KNOWN.has(key)) throw new Error(`schema keyword ${key} at ${path} is not supported by the checker`);
    if (typeof node.$ref === 'string') visit(resolve(node.$ref), v, path);
    if (node.type !== undefined) {
      const types = Array.isArray(node.type) ? (node.type as string[]) : [node.type as string];
      if (!types.some((t) => matchesType(v, t))) {
        problems.push(`${path}: expected type ${types.join('|')}, got ${typeOf(v)}`);
        return;
      }
    }
    if ('const' in node && v !== node.const) problems.push(`${path}: expected ${JSON.stringify(node.const)}`);
    if (Array.isArray(node.enum) && !node.enum.includes(v)) problems.push(`${path}: not one of ${JSON.stringify(node.enum)}`);
    if (Array.isArray(node.oneOf)) {
      const passing = (node.oneOf as SchemaNode[]).filter((branch) => checkNode(root, branch, v, path).length === 0);
      if (passing.length !== 1) problems.push(`${path}: matches ${passing.length} of oneOf, expected exactly 1`);
    }
    if (typeof v === 'number') {
      if (typeof node.minimum === 'number' && v < node.minimum) problems.push(`${path}: below minimum ${node.minimum}`);
    }
    if (typeof v === 'string') {
      if (typeof node.minLength === 'number' && v.length < node.minLength) problems.push(`${path}: shorter than ${node.minLength}`);
      if (typeof node.maxLength === 'number' && v.length > node.maxLength) problems.push(`${path}: longer than ${node.maxLength}`);
    }
    if (Array.isArray(v)) {
      if (typeof node.maxItems === 'number' && v.length > node.maxItems) problems.push(`${path}: more than ${node.maxItems} items`);
      if (node.items !== undefined) v.forEach((item, i) => { visit(node.items as SchemaNode, item, `${path}[${i}]`); });
    }
    if (typeOf(v) === 'object') {
      const o = v as Record<string, unknown>;
      const props = (node.properties ?? {}) as Record<string, SchemaNode>;
      for (const key of (node.required ?? []) as string[]) if (!(key in o)) problems.push(`${path}: missing required ${key}`);
      if (typeof node.maxProperties === 'number' && Object.keys(o).length > node.maxProperties) problems.push(`${path}: more than ${node.maxProperties} properties`);
      for (const [key, child] of Object.entries(o)) {
        const sub = props[key];
        if (sub !== undefined) visit(sub, child, `${path}.${key}`);
        else if (node.additionalProperties === false) problems.push(`${path}: unexpected property ${key}`);
        else if (typeof node.additionalProperties === 'object' && node.additionalProperties !== null) visit(node.additionalProperties as SchemaNode, child, `${path}.${key}`);
      }
    }
  };
  visit(start, value, startPath);
  return problems;
}
