// The contract refuses control characters in every request string it describes: the shared Text
// schema's pattern, and the server's guard, say the same thing.
import { describe, expect, it } from 'vitest';
import { TEXT_PATTERN } from '../../server/http/text.ts';
import { contractValidator, deref, examplesOf, loadPlatform, operationsOf, parametersOf, type OpenApiDocument } from '../support/contract.ts';

const doc = loadPlatform();
const validate = contractValidator(doc);
const requestOperations = operationsOf(doc);
const SAFE_FORMATS = new Set(['uuid', 'date', 'date-time', 'email', 'binary']);
/** A pattern that lists what it allows, anchored at both ends (`^[A-Z]{3}$`), admits no control character. */
const isClosed = (pattern: string) => /^\^.*\$$/s.test(pattern) && !pattern.includes('[^');

/** A schema and those its `$ref` leads to, nearest first. */
function chainOf(document: OpenApiDocument, node: any): any[] {
  const chain = [node];
  while (typeof chain.at(-1).$ref === 'string') chain.push(deref(document, { $ref: chain.at(-1).$ref }));
  return chain;
}

/** The patterns a schema carries itself, through `$ref` and through `allOf`. */
const patternsOf = (document: OpenApiDocument, node: any): string[] =>
  chainOf(document, node).flatMap((s) => [s.pattern, ...(s.allOf ?? []).flatMap((x: any) => patternsOf(document, x))]).filter(Boolean);

/** Whether a schema lists its values (`enum`, `const`), itself or through an `allOf` member's reference (`type` kept beside it). */
const listsValues = (schema: any): boolean =>
  Boolean(schema.enum) || 'const' in schema || (schema.allOf ?? []).some((member: any) => chainOf(doc, member).some(listsValues));

/** Every string schema reachable from a request, with the patterns it carries. */
function requestStrings(document: OpenApiDocument): Array<{ where: string; schema: any; patterns: string[] }> {
  const found: Array<{ where: string; schema: any; patterns: string[] }> = [];
  const seen = new Set<unknown>();
  // `around`: the patterns of the schemas a member of `allOf`, `anyOf` or `oneOf` sits in, which
  // apply to its value too (a field's own rules written as a second `allOf` member beside Text).
  const walk = (node: any, where: string, around: string[] = []) => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const chain = chainOf(document, node);
    const merged = Object.assign({}, ...[...chain].reverse());
    const patterns = [...around, ...patternsOf(document, node)];
    if ([merged.type].flat().includes('string')) found.push({ where, schema: merged, patterns });
    for (const s of chain) {
      for (const key of ['allOf', 'anyOf', 'oneOf'] as const) (s[key] ?? []).forEach((x: any) => walk(x, where, patterns));
      for (const key of ['items', 'then', 'else', 'additionalProperties'] as const) walk(s[key], `${where}[]`);
      for (const [name, child] of Object.entries<any>(s.properties ?? {})) walk(child, `${where}.${name}`);
    }
  };
  for (const op of requestOperations) {
    const name = `${op.method.toUpperCase()} ${op.path}`;
    for (const p of parametersOf(document, op)) walk(p.schema, `${name} ${p.in} ${p.name}`);
    for (const [type, media] of Object.entries<any>(deref(document, op.operation.requestBody)?.content ?? {})) walk(media.schema, `${name} ${type}`);
  }
  return found;
}

/** The example with `\u0000` put into the string at `path`. */
function withNul(value: unknown, path: string[]): unknown {
  if (!path.length) return `${String(value).slice(0, 1)}\u0000${String(value).slice(1)}`;
  const [head, ...rest] = path;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  copy[head!] = withNul(copy[head!], rest);
  return copy;
}

function stringPaths(value: unknown, path: string[] = []): string[][] {
  if (typeof value === 'string') return [path];
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...path, k]));
  return [];
}

describe('request strings of the contract', () => {
  it('the server quotes the Text pattern of the contract', () => {
    expect(doc.components.schemas!.Text.pattern).toBe(TEXT_PATTERN);
  });

  it('every free-text request string carries the Text pattern; the others list what they allow', () => {
    const strings = requestStrings(doc);
    expect(strings.length).toBeGreaterThan(80);
    const open = strings.filter(
      ({ schema, patterns }) =>
        !listsValues(schema) && !SAFE_FORMATS.has(schema.format) && !patterns.includes(TEXT_PATTERN) && !patterns.some(isClosed),
    );
    expect(open.map((s) => s.where)).toEqual([]);
  });

  it('no parameter schema has keywords beside a $ref: the validator drops the siblings of a parameter schema’s $ref', () => {
    const withSiblings = requestOperations.flatMap((op) =>
      parametersOf(doc, op)
        .filter((p) => typeof p.schema?.$ref === 'string' && Object.keys(p.schema).length > 1)
        .map((p) => `${op.operationId} ${p.in} ${p.name}`),
    );
    expect(withSiblings).toEqual([]);
  });

  it('no schema has a pattern or a numeric bound beside a $ref: tools that merge the siblings into the target keep one of the two, or neither', () => {
    // Prism let `ftp://…` through as a success_url, and `a:b` as a notification user, when they did;
    // openapi-zod-client let a payment intent's amount of 0 through (its minimum of 1 was a sibling).
    const found: string[] = [];
    const RULES = ['pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
    const walk = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return;
      if ('$ref' in node && RULES.some((rule) => rule in node)) found.push(where);
      for (const [key, child] of Object.entries(node)) walk(child, `${where}/${key}`);
    };
    walk(doc, '#');
    expect(found).toEqual([]);
    // The four that had one keep both patterns through allOf, each refusing what it refused.
    const url = validate('#/components/schemas/TechnicalConfigurationUpdate');
    expect([url({ success_url: 'https://loja.example/ok' }), url({ success_url: 'ftp://loja.example/ok' }), url({ success_url: 'https://loja.example/\u0000' })]).toEqual([true, false, false]);
    expect(url({ notification: { user_credentials: { user: 'a:b' } } })).toBe(false);
    // A payment intent's amount keeps its minimum of 1 and the shared amount's bounds.
    const payment = validate('#/components/schemas/PaymentIntentPayment');
    const of = (amount: unknown) => payment({ currency: 'BRL', amount });
    expect([of(1), of(0), of(2_147_483_647), of(2_147_483_648), of(1.5)]).toEqual([true, false, true, false, false]);
  });

  it('no schema $ref has keywords beside it in the bundles: they go through allOf, which 3.0 tools read too', () => {
    // openapi-backend 5 shared a $ref's target arrays with its copy beside the siblings, and then
    // compiled neither (16 of 28 operations' response validators).
    const found: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return;
      const { $ref, ...beside } = node as Record<string, unknown>;
      if (typeof $ref === 'string' && $ref.startsWith('#/components/schemas/') && Object.keys(beside).length) found.push(where);
      for (const [key, child] of Object.entries(node)) walk(child, `${where}/${key}`);
    };
    walk(doc, '#');
    expect(found).toEqual([]);
    // A field's own description still stands beside its type, through allOf.
    expect(deref(doc, { $ref: '#/components/schemas/BusinessConfiguration' }).properties.currency).toEqual({
      allOf: [{ $ref: '#/components/schemas/CurrencyCode' }],
      description: expect.stringContaining('Default currency'),
    });
  });

  it('no one-reference allOf has validation keywords beside it: a field\'s own rules are a second member', () => {
    // hey-api's zod plugin emits only the reference of a one-member allOf and dropped the keywords
    // beside it: a redirect URL kept Text's pattern and lost its `^https?://` and its 2048.
    // A `type` alone beside it stays (scripts/contract/ref-siblings.ts): it is the reference's own type,
    // so a tool that keeps only the reference loses nothing, and a validator compares unique items by it.
    const RULES = ['type', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum'];
    const typeOfReference = (node: any) => node.type === deref(doc, node.allOf[0]).type && RULES.every((rule) => rule === 'type' || !(rule in node));
    const found: string[] = [];
    const walk = (node: unknown, where: string, names = false) => {
      if (!node || typeof node !== 'object') return;
      const allOf = (node as any).allOf;
      if (!names && Array.isArray(allOf) && allOf.length === 1 && allOf[0].$ref && RULES.some((rule) => rule in node) && !typeOfReference(node)) found.push(where);
      for (const [key, child] of Object.entries(node)) if (names || (key !== 'example' && key !== 'examples')) walk(child, `${where}/${key}`, !names && key === 'properties');
    };
    walk(doc, '#');
    expect(found).toEqual([]);
    const update = deref(doc, { $ref: '#/components/schemas/TechnicalConfigurationUpdate' });
    expect(update.properties.success_url).toEqual({
      allOf: [{ $ref: '#/components/schemas/Text' }, { type: 'string', maxLength: 2048, format: 'uri', pattern: '^https?://' }],
      description: expect.stringContaining('successful checkout'),
    });
  });

  it('every const of the bundles is a one-value enum too, which generators written for 3.0 read', () => {
    const found: Array<[string, unknown, unknown]> = [];
    const walk = (node: unknown, where: string, names = false) => {
      if (!node || typeof node !== 'object') return;
      if (!names && 'const' in node) found.push([where, (node as any).const, (node as any).enum]);
      for (const [key, child] of Object.entries(node)) if (names || (key !== 'example' && key !== 'examples')) walk(child, `${where}/${key}`, !names && key === 'properties');
    };
    walk(doc, '#');
    expect(found.length).toBeGreaterThanOrEqual(18); // grant_type, token_type, the methods' `enabled: true`, ...
    expect(found.filter(([, value, values]) => JSON.stringify(values) !== JSON.stringify([value]))).toEqual([]);
  });

  it('every string of every request body example, with a NUL in it, breaks its operation’s schema', () => {
    let checked = 0;
    for (const op of requestOperations) {
      for (const [type, media] of Object.entries<any>(deref(doc, op.operation.requestBody)?.content ?? {})) {
        if (type === 'multipart/form-data') continue; // a file, not text
        const body = op.operation.requestBody.$ref ?? `${op.pointer}/requestBody`;
        const check = validate(`${body}/content/${type.replace(/\//g, '~1')}/schema`);
        for (const [name, example] of examplesOf(doc, media)) {
          for (const path of stringPaths(example)) {
            checked++;
            expect(check(withNul(example, path)), `${op.operationId} ${name} ${path.join('.')}`).toBe(false);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});
