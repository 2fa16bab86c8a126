// JSON Schema as the fuzzer needs it: a schema resolved (references followed with their sibling
// keywords, `allOf` merged), the schema at a path inside a body, values generated from a schema,
// and the paths of a value and copies of it with one node changed.
import fc from 'fast-check';
import { deref, type OpenApiDocument } from '../support/contract.ts';

type Path = Array<string | number>;

/** The schema itself: a `$ref` followed (its siblings, e.g. `maxLength`, kept over the target), `allOf` merged. */
export function resolve(doc: OpenApiDocument, node: any): any {
  if (!node || typeof node !== 'object') return {};
  let schema = node;
  if (typeof node.$ref === 'string') {
    const { $ref: _ref, ...siblings } = node;
    schema = { ...resolve(doc, deref(doc, { $ref: node.$ref })), ...siblings };
  }
  if (!schema.allOf) return schema;
  const { allOf, ...rest } = schema;
  return allOf.map((s: any) => resolve(doc, s)).reduce(
    (all: any, s: any) => ({ ...all, ...s, properties: { ...all.properties, ...s.properties }, required: [...(all.required ?? []), ...(s.required ?? [])] }),
    rest,
  );
}

/** The schema of the node at `path` inside a value of `schema` (the first alternative that has it). */
export function schemaAt(doc: OpenApiDocument, schema: any, path: Path): any {
  let at = resolve(doc, schema);
  for (const key of path) {
    const options = [at, ...(at.oneOf ?? at.anyOf ?? []).map((s: any) => resolve(doc, s))];
    const next = options.map((s) => (typeof key === 'number' ? s.items : s.properties?.[key])).find(Boolean);
    at = resolve(doc, next ?? {});
  }
  return at;
}

const firstType = (schema: any) => (Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type);

/** Values of a JSON schema (a useful subset: enough to build valid bodies for this contract). */
export function valueOf(doc: OpenApiDocument, node: any, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(doc, node ?? {});
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.examples?.length) return fc.constantFrom(...schema.examples);
  if (schema.example !== undefined) return fc.constant(schema.example);
  if (schema.oneOf || schema.anyOf) return fc.oneof(...(schema.oneOf ?? schema.anyOf).map((s: any) => valueOf(doc, s, depth + 1)));
  switch (firstType(schema)) {
    case 'integer':
      return fc.integer({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 1_000_000, 2 ** 31) });
    case 'number':
      return fc.double({ min: schema.minimum ?? 0, max: schema.maximum ?? 1_000_000, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valueOf(doc, schema.items, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      if (depth > 6) return fc.constant({});
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, prop] of Object.entries<any>(schema.properties ?? {})) model[name] = valueOf(doc, prop, depth + 1);
      return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k: string) => k in model) });
    }
    default:
      if (schema.format === 'date') return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
      if (schema.format === 'date-time') return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.format === 'uuid') return fc.uuid();
      if (schema.format === 'email') return fc.constant('loja@example.com');
      if (schema.format === 'uri') return fc.constant('https://example.com/');
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 20, 40) });
  }
}

/** Every JSON path (as key lists) inside a value, the root excluded. */
export function pathsOf(value: unknown, at: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([key, child]) => [[...at, key], ...pathsOf(child, [...at, key])]);
}

export const valueAt = (value: unknown, path: Path): unknown => path.reduce((at: any, key) => at?.[key], value);

/** A copy of `value` with the node at `path` replaced by `change(old)` (or removed when it answers `undefined`). */
export function edit(value: unknown, path: Path, change: (old: unknown) => unknown): unknown {
  const copy = structuredClone(value) as any;
  if (path.length === 0) return change(copy);
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  const last = path[path.length - 1]!;
  const next = change(parent[last]);
  if (next === undefined) Array.isArray(parent) ? parent.splice(Number(last), 1) : delete parent[last];
  else parent[last] = next;
  return copy;
}
