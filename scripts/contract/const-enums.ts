// Bundles for every tool: a schema's `const` is also written as a one-value `enum`. Both say the
// same to a JSON Schema validator, but `const` is JSON Schema 2019+ and generators written for
// OpenAPI 3.0 skip it: openapi-zod-client typed `grant_type` as any string and `enabled: true` as
// any boolean (losing "at least one method enabled"), openapi-typescript-codegen `grant_type` as
// `string`; with the `enum` they emit the literal. openapi/ keeps the `const` alone.

type Node = Record<string, unknown>;

/** `doc` with `enum: [value]` beside each schema `const` that has no `enum` (a new object). */
export function enumBesideConst<T>(doc: T): T {
  // `names`: `node` maps property names to schemas, so a member called `const` or `examples` is a property.
  const visit = (node: unknown, names = false): unknown => {
    if (Array.isArray(node)) return node.map((child) => visit(child));
    if (!node || typeof node !== 'object') return node;
    const out = Object.fromEntries(
      Object.entries(node as Node).map(([key, child]) => [key, !names && (key === 'example' || key === 'examples') ? child : visit(child, !names && key === 'properties')]),
    );
    if (!names && 'const' in out && !('enum' in out)) return { ...out, enum: [out.const] };
    return out;
  };
  return visit(doc) as T;
}
