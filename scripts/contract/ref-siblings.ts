// Bundles for every tool: no schema `$ref` has keywords beside it. OpenAPI 3.1 applies a `$ref`'s
// siblings (a field's own `description`, mostly), but tools written for 3.0 do not, and some break
// on them: openapi-backend 5 copies such a schema and shares its target's arrays (`enum`,
// `examples`, `required`) between the two, then compiles neither (16 of the 28 operations'
// response validators failed). In the bundles, a schema `$ref` with siblings is written as
// `allOf: [{ $ref }]` beside them, which every JSON Schema reader applies alike; openapi/ keeps the
// shorter form. Only schema references: a Reference Object elsewhere (a parameter, a response, an
// example) may carry `summary` and `description` in 3.1, and an `allOf` would not be one.

const SCHEMAS = '#/components/schemas/';

type Node = Record<string, unknown>;

/** `doc` with each schema `$ref` that has siblings written through `allOf` (a new object). */
export function wrapRefSiblings<T>(doc: T): T {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== 'object') return node;
    const { $ref, ...beside } = node as Node;
    if (typeof $ref === 'string' && $ref.startsWith(SCHEMAS) && Object.keys(beside).length) {
      return { allOf: [{ $ref }], ...(visit(beside) as Node) };
    }
    return Object.fromEntries(Object.entries(node as Node).map(([key, child]) => [key, visit(child)]));
  };
  return visit(doc) as T;
}
