// Bundles for every tool: a schema's `const` is also written as a one-value `enum`. Both say the
// same to a JSON Schema validator, but `const` is JSON Schema 2019+ and generators written for
// OpenAPI 3.0 skip it: openapi-zod-client typed `grant_type` as any string and `enabled: true` as
// any boolean (losing "at least one method enabled"), openapi-typescript-codegen `grant_type` as
// `string`; with the `enum` they emit the literal. openapi/ keeps the `const` alone.

import { rewriteSchemas } from './schema-walk.ts';

/** `doc` with `enum: [value]` beside each schema `const` that has no `enum` (a new object). */
export function enumBesideConst<T>(doc: T): T {
  return rewriteSchemas(doc, (node) => ('const' in node && !('enum' in node) ? { ...node, enum: [node.const] } : node));
}
