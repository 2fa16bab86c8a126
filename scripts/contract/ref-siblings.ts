// Bundles for every tool: no schema `$ref` has keywords beside it. OpenAPI 3.1 applies a `$ref`'s
// siblings (a field's own `description`, mostly), but tools written for 3.0 do not, and some break
// on them: openapi-backend 5 copies such a schema and shares its target's arrays (`enum`,
// `examples`, `required`) between the two, then compiles neither (16 of the 28 operations'
// response validators failed). In the bundles, a schema `$ref` with siblings is written as
// `allOf: [{ $ref }]` beside them, which every JSON Schema reader applies alike; openapi/ keeps the
// shorter form. Only schema references: a Reference Object elsewhere (a parameter, a response, an
// example) may carry `summary` and `description` in 3.1, and an `allOf` would not be one.

const SCHEMAS = '#/components/schemas/';

import { rewriteSchemas, type Node } from './schema-walk.ts';

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

// A field's own rules beside a reference go into `allOf` too: `{ allOf: [{ $ref }], maxLength,
// pattern }` becomes `{ allOf: [{ $ref }, { maxLength, pattern }] }`. The same schema to a JSON
// Schema validator, but hey-api's zod plugin emits only the reference when `allOf` has one member
// and drops the keywords beside it (a redirect URL lost its `^https?://` and its 2048), while it
// keeps every member of a longer `allOf`. Annotations (`description`, `examples`, `x-` keys…) stay
// where they were; a member moves only the validation keywords below, `type` with them (strict Ajv
// wants a keyword's type beside it). `enum` and `const` stay too: the compatibility checker
// (scripts/compat/) reads a schema's listed values where the schema has them, not in its members.
const RULES = new Set([
  'type', 'format', 'multipleOf', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties',
]);

// A `type` alone beside the reference stays where it is: nothing is lost where a tool keeps only the
// reference (its target has that type), and a validator reads a schema's own `type` to compare
// unique items in one pass. Ajv compares array items whose schema names no scalar `type` pairwise,
// and with allErrors even past `maxItems`: 1,199 objects in a seller's `currencies` held the event
// loop 6-13 s and cost the sandbox its data directory's lock (re-attack review, 2026-11-25).
/** `doc` with the validation keywords beside a one-reference `allOf` moved into a second member (a new object). */
export function rulesBesideRefAsMember<T>(doc: T): T {
  return rewriteSchemas(doc, (node) => {
    const { allOf } = node;
    if (!Array.isArray(allOf) || allOf.length !== 1 || typeof (allOf[0] as Node)?.$ref !== 'string') return node;
    const rules = Object.entries(node).filter(([key]) => RULES.has(key));
    if (!rules.length || (rules.length === 1 && rules[0]![0] === 'type')) return node;
    const kept = Object.fromEntries(Object.entries(node).filter(([key]) => !RULES.has(key)));
    return { ...kept, allOf: [allOf[0], Object.fromEntries(rules)] };
  });
}
