// One walk for the bundle steps that rewrite schemas: every object of a document, children first,
// given to `rewrite` unless it maps property names to schemas (`properties`: a property called
// `const` or `allOf` is a name, not a keyword) or is an example's value.

export type Node = Record<string, unknown>;

/** `doc` with each schema-like object replaced by `rewrite(it)` (a new object; `doc` is left as it is). */
export function rewriteSchemas<T>(doc: T, rewrite: (node: Node) => Node): T {
  const visit = (node: unknown, names = false): unknown => {
    if (Array.isArray(node)) return node.map((child) => visit(child));
    if (!node || typeof node !== 'object') return node;
    const out = Object.fromEntries(
      Object.entries(node as Node).map(([key, child]) => [key, !names && (key === 'example' || key === 'examples') ? child : visit(child, !names && key === 'properties')]),
    );
    return names ? out : rewrite(out);
  };
  return visit(doc) as T;
}
