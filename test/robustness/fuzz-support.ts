// Contract fuzzing from the joined bundle itself: for each operation, requests built from its
// examples and schemas, valid ones and broken ones (wrong types, missing fields, out-of-range
// values, oversized strings, malformed JSON, wrong content types, bad or absent tokens), and the
// checks every answer must pass: a status the operation documents, never a 5xx, a body valid
// against the documented schema of that status.
import fc from 'fast-check';
import {
  contractValidator,
  deref,
  parametersOf,
  responsePointer,
  type OpenApiDocument,
  type Operation,
} from '../support/contract.ts';
import { exampleRequest, securityKinds } from '../support/examples.ts';

export interface Credentials {
  /** Bearer token of a sandbox seller (oauth2 operations). */
  token: string;
  /** `Bearer <sandbox admin token>`. */
  admin: string;
  /** `Basic ...` of the same seller's client (the Basic token call). */
  basic: string;
  /** Form fields of a valid token request. */
  tokenForm: Record<string, string>;
  /** Real ids to use as path parameters, by parameter name, so valid requests reach the handlers. */
  ids: Record<string, string[]>;
}

/** One request, described as data so that a failure prints its reproduction. */
export interface FuzzRequest {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Raw body text (JSON, form) or a FormData. */
  body?: string | FormData;
}

export interface FuzzAnswer {
  status: number;
  contentType: string;
  text: string;
}

const MUTATIONS = [
  'valid',
  'valid-generated',
  'wrong-type',
  'missing-field',
  'out-of-range',
  'oversized-string',
  'huge-body',
  'malformed-json',
  'wrong-content-type',
  'bad-token',
  'no-token',
  'bad-path-param',
  'bad-query',
] as const;
type Mutation = (typeof MUTATIONS)[number];

/** Values of a JSON schema (a useful subset: enough to build valid bodies for this contract). */
export function valueOf(doc: OpenApiDocument, node: any, depth = 0): fc.Arbitrary<unknown> {
  const schema = deref(doc, node ?? {});
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.examples?.length) return fc.constantFrom(...schema.examples);
  if (schema.example !== undefined) return fc.constant(schema.example);
  if (schema.allOf) {
    const merged = schema.allOf.map((s: any) => deref(doc, s)).reduce(
      (all: any, s: any) => ({ ...all, ...s, properties: { ...all.properties, ...s.properties }, required: [...(all.required ?? []), ...(s.required ?? [])] }),
      {},
    );
    delete merged.allOf;
    return valueOf(doc, merged, depth);
  }
  if (schema.oneOf || schema.anyOf) return fc.oneof(...(schema.oneOf ?? schema.anyOf).map((s: any) => valueOf(doc, s, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
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
      const props = Object.entries<any>(schema.properties ?? {});
      const required = new Set<string>(schema.required ?? []);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, prop] of props) model[name] = valueOf(doc, prop, depth + 1);
      return fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
    }
    case 'string':
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
function pathsOf(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([key, child]) => [[...at, key], ...pathsOf(child, [...at, key])]);
}

/** A copy of `value` with the node at `path` replaced by `change(old)` (or removed when it answers `undefined`). */
function edit(value: unknown, path: Array<string | number>, change: (old: unknown) => unknown): unknown {
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

const wrongTypeOf = (old: unknown): fc.Arbitrary<unknown> => {
  const others: unknown[] = [null, true, 12345, -1.5, 'texto', [], {}, [1, 'a'], { nested: { deep: 1 } }];
  return fc.constantFrom(...others.filter((o) => typeof o !== typeof old || Array.isArray(o) !== Array.isArray(old)));
};

const weirdStrings = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('', ' ', '0', '-1', '99999999999999999999', 'null', '../../etc/passwd', '%00', "' OR 1=1 --", '😀', 'a'.repeat(300), '00000000-0000-0000-0000-000000000000', '__proto__', 'constructor'),
);

/** Builds requests of one operation. */
export function requestsOf(doc: OpenApiDocument, op: Operation, creds: Credentials): fc.Arbitrary<FuzzRequest> {
  const example = exampleRequest(doc, op);
  const params = parametersOf(doc, op);
  const kinds = securityKinds(doc, op);
  const content = deref(doc, op.operation.requestBody ?? {}).content ?? {};
  const bodySchema = example.mediaType ? content[example.mediaType]?.schema : undefined;
  const isForm = example.mediaType === 'application/x-www-form-urlencoded';
  const isMultipart = example.mediaType === 'multipart/form-data';
  const exampleBody = op.operationId?.startsWith('issueAccessToken') ? creds.tokenForm : example.body;
  const bodyPaths = isMultipart ? [] : pathsOf(exampleBody);

  const authHeaders = (): Record<string, string> => {
    if (kinds.includes('oauth2')) return { authorization: `Bearer ${creds.token}` };
    if (kinds.includes('http:basic')) return { authorization: creds.basic };
    if (kinds.includes('http:bearer')) return { authorization: creds.admin };
    return {};
  };
  const pathParam = (name: string, fallback: string) =>
    creds.ids[name]?.length ? fc.constantFrom(fallback, ...creds.ids[name]!) : fc.constant(fallback);

  const pathValues = fc.record(
    Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, pathParam(p.name, example.path[p.name]!)])),
  ) as fc.Arbitrary<Record<string, string>>;
  const validQuery = fc.record(
    Object.fromEntries(
      params.filter((p) => p.in === 'query').map((p) => [p.name, p.required ? fc.constant(example.query[p.name]!) : fc.option(valueOf(doc, p.schema), { nil: undefined })]),
    ),
  ) as fc.Arbitrary<Record<string, unknown>>;

  const build = (mutation: Mutation, path: Record<string, string>, query: Record<string, unknown>, body: unknown, extra: { headers?: Record<string, string>; raw?: string } = {}): FuzzRequest => {
    let url = op.path.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(path[name] ?? ''));
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    if ([...q].length) url += `?${q}`;
    const headers: Record<string, string> = { ...example.header, ...authHeaders() };
    let raw: string | FormData | undefined = extra.raw;
    if (raw === undefined && example.mediaType && body !== undefined) {
      if (isMultipart) raw = body as FormData;
      else if (isForm) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        raw = new URLSearchParams(Object.entries((body ?? {}) as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)])).toString();
      } else {
        headers['content-type'] = 'application/json';
        raw = JSON.stringify(body);
      }
    }
    Object.assign(headers, extra.headers);
    for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
    // fetch cannot send a body with GET/HEAD; those operations are fuzzed through path, query and token.
    if (op.method === 'get' || op.method === 'head') {
      raw = undefined;
      delete headers['content-type'];
    }
    return { kind: mutation, method: op.method.toUpperCase(), path: url, headers, body: raw };
  };

  const pick = <T>(items: T[]) => (items.length ? fc.constantFrom(...items) : fc.constant(undefined));
  const leafPaths = bodyPaths.filter((p) => {
    const v = p.reduce((at: any, k) => at?.[k], exampleBody);
    return v === null || typeof v !== 'object';
  });
  const numberPaths = bodyPaths.filter((p) => typeof p.reduce((at: any, k) => at?.[k], exampleBody) === 'number');
  const stringPaths = bodyPaths.filter((p) => typeof p.reduce((at: any, k) => at?.[k], exampleBody) === 'string');

  const byMutation: Record<Mutation, fc.Arbitrary<FuzzRequest>> = {
    valid: fc.tuple(pathValues, validQuery).map(([p, q]) => build('valid', p, q, exampleBody)),
    'valid-generated': fc
      .tuple(pathValues, validQuery, bodySchema && !isMultipart && !isForm ? valueOf(doc, bodySchema) : fc.constant(exampleBody))
      .map(([p, q, b]) => build('valid-generated', p, q, b)),
    'wrong-type': fc
      .tuple(pathValues, pick(bodyPaths))
      .chain(([p, at]) => (at ? wrongTypeOf(at.reduce((v: any, k) => v?.[k], exampleBody)).map((w) => build('wrong-type', p, {}, edit(exampleBody, at, () => w))) : fc.constant(build('wrong-type', p, {}, exampleBody)))),
    'missing-field': fc.tuple(pathValues, pick(bodyPaths)).map(([p, at]) => build('missing-field', p, {}, at ? edit(exampleBody, at, () => undefined) : undefined)),
    'out-of-range': fc
      .tuple(pathValues, pick(numberPaths), fc.constantFrom(-1, 0, -2147483649, 2 ** 53, 1e308, 0.5, -0.0001))
      .map(([p, at, n]) => build('out-of-range', p, {}, at ? edit(exampleBody, at, () => n) : exampleBody)),
    'oversized-string': fc
      .tuple(pathValues, pick(stringPaths.length ? stringPaths : leafPaths), fc.integer({ min: 256, max: 20_000 }))
      .map(([p, at, n]) => build('oversized-string', p, {}, at ? edit(exampleBody, at, () => 'x'.repeat(n)) : exampleBody)),
    'huge-body': pathValues.map((p) =>
      example.mediaType && !isMultipart
        ? build('huge-body', p, {}, undefined, { raw: isForm ? `grant_type=${'a'.repeat(1_100_000)}` : JSON.stringify({ padding: 'a'.repeat(1_100_000) }), headers: { 'content-type': isForm ? 'application/x-www-form-urlencoded' : 'application/json' } })
        : build('huge-body', p, {}, exampleBody),
    ),
    'malformed-json': fc
      .tuple(pathValues, fc.constantFrom('{', '{"a":', 'null', '[]', '"text"', '{"a":1,}', '\u0000', '{"__proto__":{"x":1}}', '1e999999'))
      .map(([p, raw]) => build('malformed-json', p, {}, undefined, { raw, headers: { 'content-type': 'application/json' } })),
    'wrong-content-type': fc
      .tuple(pathValues, fc.constantFrom('text/plain', 'application/xml', 'application/octet-stream', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/x-www-form-urlencoded'))
      .map(([p, type]) => build('wrong-content-type', p, {}, undefined, { raw: isMultipart ? 'not multipart' : JSON.stringify(exampleBody ?? {}), headers: { 'content-type': type } })),
    'bad-token': fc
      .tuple(pathValues, fc.constantFrom('Bearer ', 'Bearer x.y.z', `Bearer ${creds.token}x`, `Bearer ${creds.token.split('.').slice(0, 2).join('.')}.AAAA`, 'Basic Zm9vOmJhcg==', 'Basic !!!', 'Bearer sandbox-admin-tokenX', 'Token abc', 'Bearer ' + 'a'.repeat(5000)))
      .map(([p, auth]) => build('bad-token', p, {}, exampleBody, { headers: { authorization: auth } })),
    'no-token': pathValues.map((p) => build('no-token', p, {}, exampleBody, { headers: { authorization: '' } })),
    'bad-path-param': fc
      .tuple(pathValues, validQuery, weirdStrings)
      // An empty, `.` or `..` segment would name another path (fetch resolves dot segments), not this operation.
      .filter(([, , s]) => !['', '.', '..'].includes(s))
      .map(([p, q, s]) => build('bad-path-param', Object.fromEntries(Object.keys(p).map((k) => [k, s])), q, exampleBody)),
    'bad-query': fc
      .tuple(pathValues, fc.dictionary(fc.constantFrom(...params.filter((p) => p.in === 'query').map((p) => p.name), 'unknown', 'page'), weirdStrings, { maxKeys: 3 }))
      .map(([p, q]) => build('bad-query', p, { ...example.query, ...q }, exampleBody)),
  };
  return fc.constantFrom(...MUTATIONS).chain((m) => byMutation[m]);
}

export async function send(baseUrl: string, req: FuzzRequest): Promise<FuzzAnswer> {
  const res = await fetch(baseUrl + req.path, { method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(15_000) });
  return { status: res.status, contentType: (res.headers.get('content-type') ?? '').split(';')[0]!.trim(), text: await res.text() };
}

/** Why an answer breaks the contract of its operation, or undefined when it keeps it. */
export function contractProblem(doc: OpenApiDocument, validate: ReturnType<typeof contractValidator>, op: Operation, answer: FuzzAnswer, rateLimited = false): string | undefined {
  const status = String(answer.status);
  if (answer.status >= 500) return `server error ${status}: ${answer.text.slice(0, 300)}`;
  if (answer.status === 429 && rateLimited) return undefined;
  const response = op.operation.responses[status];
  if (!response) return `status ${status} not documented (documented: ${Object.keys(op.operation.responses).join(', ')}): ${answer.text.slice(0, 300)}`;
  const content = deref(doc, response).content;
  if (!content) return undefined;
  if (!(answer.contentType in content)) return `content type "${answer.contentType}" not documented for ${status} (${Object.keys(content).join(', ')})`;
  if (!/json/.test(answer.contentType)) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `body of ${status} is not JSON: ${answer.text.slice(0, 200)}`;
  }
  const check = validate(responsePointer(doc, op, status, answer.contentType));
  if (!check(body)) return `body of ${status} breaks its schema: ${JSON.stringify(check.errors?.slice(0, 3))} body ${answer.text.slice(0, 300)}`;
  return undefined;
}
