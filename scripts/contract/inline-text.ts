// Bundles for every tool: a field that narrows the shared Text rule (`$ref: Text` with its own
// `maxLength` beside it, as openapi/ writes it: one place for the rule) is written out at the field
// in the bundles, as `type: string` with Text's pattern and the field's own keywords. OpenAPI 3.1
// applies keywords beside a `$ref`, but many tools written for 3.0 (generators, security linters)
// drop them, and with them every request bound. A field whose own keywords would clash with the
// rule's (its own `pattern`) is written in openapi/ as `allOf: [$ref: Text]` beside its pattern,
// which the bundles keep (a `$ref` beside a pattern: tools that merge siblings keep one of the two
// patterns; ref-siblings.ts then makes its own rule a second `allOf` member); one written as a
// `$ref` beside its pattern would be left so. A field written `allOf: [$ref: Text]` with no keyword
// of its own that clashes (a parameter: see below) is written out like a `$ref`. A bundle where no
// `$ref: Text` is left then drops the component, which linters would report as unused.

const TEXT_REF = '#/components/schemas/Text';

type Node = Record<string, unknown>;

/** `doc` with each `$ref: Text` that has keywords beside it written out (a new object; `doc` is left as it is). */
export function inlineTextRefs<T extends { components?: { schemas?: Record<string, unknown> } }>(doc: T): T {
  const text = doc.components?.schemas?.Text as Node | undefined;
  if (!text) return doc;
  // The rule itself; its description is the component's, not the field's.
  const { description: _description, ...rule } = text;
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== 'object') return node;
    const { $ref, ...beside } = node as Node;
    if ($ref === TEXT_REF && Object.keys(beside).length && Object.keys(beside).every((k) => !(k in rule))) {
      return { ...rule, ...beside };
    }
    // The same field written `type: string` + `allOf: [$ref: Text]` (a parameter's schema, whose
    // `$ref` siblings express-openapi-validator drops), when nothing beside it clashes either.
    const { allOf, type, ...others } = node as Node;
    if (Array.isArray(allOf) && allOf.length === 1 && (allOf[0] as Node)?.$ref === TEXT_REF && Object.keys(allOf[0] as Node).length === 1
      && (type === undefined || type === rule.type) && Object.keys(others).every((k) => !(k in rule))) {
      return { ...rule, ...others };
    }
    return Object.fromEntries(Object.entries(node as Node).map(([k, v]) => [k, visit(v)]));
  };
  const out = visit(doc) as T;
  if (!JSON.stringify(out).includes(`"${TEXT_REF}"`)) {
    const { Text: _unused, ...schemas } = out.components!.schemas!;
    return { ...out, components: { ...out.components, schemas } };
  }
  return out;
}
