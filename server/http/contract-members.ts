// The platform accepts unknown members in a request body (openapi/README.md: request schemas stay
// open, so that clients may send what a later version adds) and keeps none of them: after the
// validator, a JSON body keeps only the members its operation's schema names, at every depth. An
// object the contract marks open (`additionalProperties: true`, as a subscription's address) keeps
// its other members as sent. Before, an unknown member of a payment intent's customer was stored and
// copied into every notification of the intent: a seller could plant ~1 MB in each, and a page of
// the delivery log then held 100 MB.
//
// Written here rather than with Ajv's `removeAdditional: 'all'`: that removes, in each branch of an
// `allOf` (and of a `$ref` with siblings), the members the other branches name.
import type { RequestHandler } from 'express';
import type { PlatformDocument } from './contract.ts';

type Schema = Record<string, unknown>;

interface Members {
  /** Each named member's schemas, from every branch that names it. */
  named: Map<string, Schema[]>;
  /** Unknown members are kept: a branch says `additionalProperties` (true or a schema) or `patternProperties`. */
  open: boolean;
  /** No branch names any member: a value the contract does not describe member by member, kept whole. */
  undescribed: boolean;
  /** The schemas of an array's items, from every branch. */
  items: Schema[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `#/components/schemas/X` in the document (the bundles hold local references only). */
function referenced(document: PlatformDocument, ref: string): Schema | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = document;
  for (const part of ref.slice(2).split('/')) at = isObject(at) ? at[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isObject(at) ? at : undefined;
}

/** What a request body keeps, given its schema; the walk of each schema is done once per document. */
export function contractMembers(document: PlatformDocument): (schema: Schema, value: unknown) => unknown {
  const cache = new WeakMap<Schema, Members>();

  const membersOf = (schema: Schema): Members => {
    const known = cache.get(schema);
    if (known) return known;
    const members: Members = { named: new Map(), open: false, undescribed: true, items: [] };
    cache.set(schema, members); // a schema that refers to itself ends here
    const branches: Schema[] = [];
    if (typeof schema.$ref === 'string') {
      const target = referenced(document, schema.$ref);
      if (target) branches.push(target);
      else members.open = true; // not followed: kept as sent
    }
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(schema[key])) branches.push(...(schema[key] as Schema[]).filter(isObject));
    for (const key of ['if', 'then', 'else'] as const) if (isObject(schema[key])) branches.push(schema[key] as Schema);
    if (isObject(schema.properties)) {
      members.undescribed = false;
      for (const [name, sub] of Object.entries(schema.properties)) if (isObject(sub)) members.named.set(name, [sub]);
    }
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) members.open = true;
    if (schema.patternProperties !== undefined) members.open = true;
    if (isObject(schema.items)) members.items.push(schema.items);
    for (const branch of branches) {
      const more = membersOf(branch);
      members.open ||= more.open;
      members.undescribed &&= more.undescribed;
      members.items.push(...more.items);
      for (const [name, subs] of more.named) members.named.set(name, [...(members.named.get(name) ?? []), ...subs]);
    }
    return members;
  };

  const keep = (schemas: Schema[], value: unknown): unknown => {
    if (!schemas.length) return value;
    const all = schemas.map(membersOf);
    if (Array.isArray(value)) {
      const items = all.flatMap((m) => m.items);
      return items.length ? value.map((item) => keep(items, item)) : value;
    }
    if (!isObject(value) || all.every((m) => m.undescribed)) return value;
    const open = all.some((m) => m.open);
    const kept: Record<string, unknown> = {};
    // Own members, whatever their name: `kept.__proto__ = …` would set the object's prototype instead.
    const put = (name: string, member: unknown) => Object.defineProperty(kept, name, { value: member, enumerable: true, writable: true, configurable: true });
    for (const [name, member] of Object.entries(value)) {
      const subs = all.flatMap((m) => m.named.get(name) ?? []);
      if (subs.length) put(name, keep(subs, member));
      else if (open) put(name, member);
    }
    return kept;
  };

  return (schema, value) => keep([schema], value);
}

/** After the validator: a JSON body keeps only the members its operation's schema names. */
export function keepContractMembers(document: PlatformDocument): RequestHandler {
  const keep = contractMembers(document);
  const resolved = (value: unknown) => (isObject(value) && typeof value.$ref === 'string' ? referenced(document, value.$ref) : value);
  return (req, _res, next) => {
    const operation = req.operation && document.paths[req.operation.template]?.[req.operation.method.toLowerCase()];
    const requestBody = resolved(operation?.requestBody) as { content?: Record<string, { schema?: Schema }> } | undefined;
    const schema = requestBody?.content?.['application/json']?.schema;
    if (schema && isObject(req.body) && req.is('application/json')) req.body = keep(schema, req.body);
    next();
  };
}
