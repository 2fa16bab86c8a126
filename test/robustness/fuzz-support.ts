// Contract fuzzing from the joined bundle itself: for each operation, requests built on a valid
// request of the fuzzer's world (real sellers, links, plans, subscriptions...; fuzz-world.ts), valid
// ones and broken ones: schema-generated bodies, real ids mixed and changed, hostile text and
// boundary numbers (fuzz-hostile.ts), other spellings of the path, wrong types, missing fields,
// malformed JSON, wrong content types, bad or absent tokens. The checks every answer must pass are
// in fuzz-oracle.ts.
import fc from 'fast-check';
import { deref, parametersOf, type OpenApiDocument, type Operation } from '../support/contract.ts';
import { exampleRequest, securityKinds } from '../support/examples.ts';
import { templateSpellingsOf } from '../support/path-spellings.ts';
import { rawRequest, type RawAnswer } from '../support/raw-http.ts';
import { boundaryNumbers, encodeUrlValue, hostileText, hostileUrlValue, mutatedId } from './fuzz-hostile.ts';
import { edit, pathsOf, resolve, schemaAt, valueAt, valueOf } from './fuzz-schema.ts';
import { clientCredentials, SAME_AS, type Scenario, type World } from './fuzz-world.ts';

/** One request, described as data so that a failure prints its reproduction. */
export interface FuzzRequest {
  kind: Kind;
  method: string;
  /** The request target as sent (path and query, percent-encoded). */
  path: string;
  headers: Record<string, string>;
  /** Raw body (JSON, form, bytes) or a FormData. */
  body?: string | Buffer | FormData;
}

/** Kinds of request, with how often each is drawn. */
const KINDS = {
  valid: 4,
  refusal: 1,
  'valid-generated': 2,
  'mixed-ids': 3,
  'hostile-text': 4,
  'boundary-number': 2,
  'path-spelling': 2,
  'wrong-type': 1,
  'missing-field': 1,
  'huge-body': 1,
  'malformed-body': 1,
  'wrong-content-type': 1,
  'bad-token': 1,
  'no-token': 1,
  'bad-path-param': 1,
  'bad-query': 1,
} as const;
export type Kind = keyof typeof KINDS;

/** Fields whose real value a schema-generated body keeps, so that it reaches the rules past "not found". */
const KEPT_IN_GENERATED = ['seller_id', 'plan_id', 'payment_id'];

const weirdStrings = fc.oneof(
  fc.string({ maxLength: 30 }),
  hostileUrlValue,
  fc.constantFrom(' ', '0', '-1', '99999999999999999999', 'null', '%00', "' OR 1=1 --", '00000000-0000-0000-0000-000000000000', '__proto__', 'constructor'),
);

const wrongTypeOf = (old: unknown): fc.Arbitrary<unknown> => {
  const others: unknown[] = [null, true, 12345, -1.5, 'texto', [], {}, [1, 'a'], { nested: { deep: 1 } }];
  return fc.constantFrom(...others.filter((o) => typeof o !== typeof old || Array.isArray(o) !== Array.isArray(old)));
};

interface Parts {
  /** Path parameters, percent-encoded. */
  path: Record<string, string>;
  /** Query parameters, percent-encoded. */
  query: Record<string, string>;
  body: unknown;
  /** The Authorization header, when not the operation's usual one. */
  auth?: string;
}

const encodeAll = (values: Record<string, string> | undefined) => Object.fromEntries(Object.entries(values ?? {}).map(([k, v]) => [k, encodeUrlValue(v)]));
const pick = <T>(items: T[]) => (items.length ? fc.constantFrom(...items) : fc.constant(undefined));

/** Requests of one operation: `any` draws every kind, `valid` only valid requests. */
export function requestsOf(doc: OpenApiDocument, op: Operation, world: World): { any: fc.Arbitrary<FuzzRequest>; valid: fc.Arbitrary<FuzzRequest> } {
  const example = exampleRequest(doc, op);
  const params = parametersOf(doc, op);
  const [pathParams, queryParams] = [params.filter((p) => p.in === 'path'), params.filter((p) => p.in === 'query')];
  const security = securityKinds(doc, op);
  const content = deref(doc, op.operation.requestBody ?? {}).content ?? {};
  const bodySchema = example.mediaType ? content[example.mediaType]?.schema : undefined;
  const [isForm, isMultipart] = [example.mediaType === 'application/x-www-form-urlencoded', example.mediaType === 'multipart/form-data'];
  const bodyless = op.method === 'get' || op.method === 'head';
  const [good, victim] = [clientCredentials(world.seller), clientCredentials(world.other)];
  // Wrong secrets are only ever tried on the other seller's client: the throttle of failed attempts
  // (429) must not lock out the client whose valid requests reach the 200.
  const tokenForm = op.operationId === 'issueAccessToken';
  const pool = (name: string) => world.real[SAME_AS[name] ?? name] ?? [];

  const partsOf = (s: Scenario): Parts => ({ path: encodeAll({ ...example.path, ...s.path }), query: encodeAll({ ...example.query, ...s.query }), body: s.body ?? example.body, auth: s.auth });
  const validParts = (world.valid[op.operationId] ?? fc.constant({})).map(partsOf);
  const refusal = world.refusals[op.operationId]?.map(partsOf);
  const parts = (kind: Kind) => (kind === 'refusal' && refusal) || (tokenForm && kind !== 'valid' ? validParts.map((p) => ({ ...p, body: victim.tokenForm })) : validParts);

  const authorization = (kind: Kind): Record<string, string> => {
    if (security.includes('oauth2')) return { authorization: `Bearer ${world.seller.token}` };
    if (security.includes('http:basic')) return { authorization: kind === 'valid' ? good.basic : victim.basic };
    if (security.includes('http:bearer')) return { authorization: world.admin };
    return {};
  };

  const build = (kind: Kind, p: Parts, extra: { headers?: Record<string, string>; raw?: string | Buffer; template?: string } = {}): FuzzRequest => {
    let url = (extra.template ?? op.path).replace(/\{([^}]+)\}/g, (_, name) => p.path[name] ?? '');
    const query = Object.entries(p.query).map(([k, v]) => `${encodeUrlValue(k)}=${v}`);
    if (query.length) url += `?${query.join('&')}`;
    const headers: Record<string, string> = { ...example.header, ...(p.auth ? { authorization: p.auth } : authorization(kind)) };
    let body: FuzzRequest['body'] = extra.raw;
    if (body === undefined && example.mediaType && p.body !== undefined) {
      if (isMultipart) body = p.body as FormData;
      else if (isForm) [headers['content-type'], body] = ['application/x-www-form-urlencoded', formText(p.body)];
      else [headers['content-type'], body] = ['application/json', JSON.stringify(p.body)];
    }
    Object.assign(headers, extra.headers);
    for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
    if (bodyless) [body, headers['content-type']] = [undefined, ''];
    if (headers['content-type'] === '') delete headers['content-type'];
    return { kind, method: op.method.toUpperCase(), path: url, headers, body };
  };

  /** A kind built from the valid parts of the request and one more draw. */
  const on = <T>(kind: Kind, draw: (p: Parts) => fc.Arbitrary<T>, make: (p: Parts, t: T) => FuzzRequest) =>
    parts(kind).chain((p) => draw(p).map((t) => make(p, t)));
  const bodyPathsOf = (p: Parts) => (isMultipart ? [] : pathsOf(p.body));
  const leaves = (p: Parts, type: string) => bodyPathsOf(p).filter((at) => typeof valueAt(p.body, at) === type);
  const withBody = (p: Parts, body: unknown): Parts => ({ ...p, body });

  /** A real value, another real one of its kind, one changed a little, or one the schema allows. */
  const idLike = (name: string, current: string, schema: any) =>
    fc.oneof(fc.constant(current), pick(pool(name)).map((v) => v ?? current), mutatedId(current), valueOf(doc, schema).map(String));

  const generatedBody = bodySchema && !isMultipart ? valueOf(doc, bodySchema) : fc.constant(undefined);
  const byKind: Record<Kind, fc.Arbitrary<FuzzRequest>> = {
    valid: parts('valid').map((p) => build('valid', p)),
    refusal: parts('refusal').map((p) => build('refusal', p)),
    'valid-generated': on('valid-generated', () => fc.tuple(generatedBody, optionalQuery(doc, queryParams)), (p, [generated, query]) => {
      let body = generated ?? p.body;
      if (!tokenForm && body && typeof body === 'object' && p.body && typeof p.body === 'object')
        for (const key of KEPT_IN_GENERATED) if (key in (p.body as object)) body = { ...(body as object), [key]: (p.body as any)[key] };
      return build('valid-generated', { ...p, query: { ...p.query, ...query }, body });
    }),
    'mixed-ids': on(
      'mixed-ids',
      (p) => {
        const idPaths = bodyPathsOf(p).filter((at) => typeof at.at(-1) === 'string' && pool(at.at(-1) as string).length && typeof valueAt(p.body, at) === 'string');
        const ids = (where: 'path' | 'query') =>
          fc.record(Object.fromEntries(params.filter((param) => param.in === where && (where === 'path' || pool(param.name).length) && p[where][param.name] !== undefined).map((param) => [param.name, idLike(param.name, decodeURIComponent(p[where][param.name]!), param.schema)])));
        const body = fc.tuple(...idPaths.map((at) => idLike(at.at(-1) as string, valueAt(p.body, at) as string, schemaAt(doc, bodySchema, at))));
        return fc.tuple(ids('path'), ids('query'), body).map(([path, query, values]) => ({ path, query, body: idPaths.reduce((b, at, i) => edit(b, at, () => values[i]), p.body) }));
      },
      (p, { path, query, body }) => build('mixed-ids', { ...p, path: encodeAll(path as Record<string, string>), query: { ...p.query, ...encodeAll(query as Record<string, string>) }, body }),
    ),
    'hostile-text': on(
      'hostile-text',
      (p) => {
        const targets: Array<['body' | 'path' | 'query' | 'key' | 'file', Array<string | number>]> = [
          ...(isMultipart ? [['file', []] as ['file', string[]]] : []),
          ...leaves(p, 'string').map((at) => ['body', at] as ['body', Array<string | number>]),
          ...pathParams.map((param) => ['path', [param.name]] as ['path', string[]]),
          ...queryParams.map((param) => ['query', [param.name]] as ['query', string[]]),
          ...(p.body && typeof p.body === 'object' && !isMultipart ? [['key', []] as ['key', string[]]] : []),
        ];
        return fc.tuple(pick(targets), hostileText, hostileUrlValue);
      },
      (p, [target, text, urlValue]) => {
        const [where, at] = target ?? ['none', []];
        if (where === 'body') return build('hostile-text', withBody(p, edit(p.body, at, () => text)));
        if (where === 'file') return build('hostile-text', withBody(p, renamedFiles(p.body as FormData, text.slice(0, 500))));
        if (where === 'key') return build('hostile-text', withBody(p, { ...(p.body as object), [text.slice(0, 200)]: 'x' }));
        if (where === 'path' || where === 'query') return build('hostile-text', { ...p, [where]: { ...p[where], [at[0]!]: urlValue } });
        return build('hostile-text', p);
      },
    ),
    'boundary-number': on(
      'boundary-number',
      (p) => {
        const numeric = [...leaves(p, 'number'), ...bodyPathsOf(p).filter((at) => ['integer', 'number'].includes(schemaAt(doc, bodySchema, at).type))];
        const inUrl = params.filter((param) => ['integer', 'number'].includes(resolve(doc, param.schema).type));
        return fc.oneof(
          pick(numeric).chain((at) => (at ? boundaryNumbers(schemaAt(doc, bodySchema, at)).map((n) => withBody(p, edit(p.body, at, () => n))) : fc.constant(p))),
          pick(inUrl).chain((param) =>
            param ? boundaryNumbers(resolve(doc, param.schema)).map((n) => ({ ...p, [param.in]: { ...(p as any)[param.in], [param.name]: encodeUrlValue(String(n)) } })) : fc.constant(p),
          ),
        );
      },
      (_, changed) => build('boundary-number', changed as Parts),
    ),
    'path-spelling': on('path-spelling', () => pick(templateSpellingsOf(op.path, Object.keys(doc.paths))), (p, template) => build('path-spelling', p, { template })),
    'wrong-type': on('wrong-type', (p) => pick(bodyPathsOf(p)).chain((at) => (at ? wrongTypeOf(valueAt(p.body, at)).map((w) => edit(p.body, at, () => w)) : fc.constant(p.body))), (p, body) => build('wrong-type', withBody(p, body))),
    'missing-field': on('missing-field', (p) => pick(bodyPathsOf(p)), (p, at) => build('missing-field', withBody(p, at ? edit(p.body, at, () => undefined) : undefined))),
    'huge-body': parts('huge-body').map((p) =>
      example.mediaType && !isMultipart
        ? build('huge-body', p, { raw: isForm ? `grant_type=${'a'.repeat(1_100_000)}` : JSON.stringify({ padding: 'a'.repeat(1_100_000) }), headers: { 'content-type': isForm ? 'application/x-www-form-urlencoded' : 'application/json' } })
        : build('huge-body', p),
    ),
    'malformed-body': on(
      'malformed-body',
      () => fc.constantFrom<string | Buffer>('{', '{"a":', 'null', '[]', '"text"', '{"a":1,}', '\u0000', '{"__proto__":{"x":1}}', '1e999999', Buffer.from([0xff, 0xfe, 0x7b]), Buffer.from('{"a":"\xed\xa0\x80"}', 'latin1'), Buffer.from('{"a":"\xc0\xaf"}', 'latin1')),
      (p, raw) => build('malformed-body', p, { raw, headers: { 'content-type': isForm ? 'application/x-www-form-urlencoded' : 'application/json' } }),
    ),
    'wrong-content-type': on(
      'wrong-content-type',
      () => fc.constantFrom('text/plain', 'application/xml', 'application/octet-stream', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/x-www-form-urlencoded'),
      (p, type) => build('wrong-content-type', p, { raw: isMultipart ? 'not multipart' : JSON.stringify(p.body ?? {}), headers: { 'content-type': type } }),
    ),
    'bad-token': on(
      'bad-token',
      () => fc.constantFrom('Bearer ', 'Bearer x.y.z', `Bearer ${world.seller.token}x`, `Bearer ${world.seller.token.split('.').slice(0, 2).join('.')}.AAAA`, 'Basic Zm9vOmJhcg==', 'Basic !!!', 'Bearer sandbox-admin-tokenX', 'Token abc', 'Bearer ' + 'a'.repeat(5000)),
      (p, auth) => build('bad-token', p, { headers: { authorization: auth } }),
    ),
    'no-token': parts('no-token').map((p) => build('no-token', p, { headers: { authorization: '' } })),
    'bad-path-param': on(
      'bad-path-param',
      // An empty, `.` or `..` segment names another path, not this operation.
      () => weirdStrings.filter((s) => !['', '.', '..'].includes(s)),
      (p, s) => build('bad-path-param', { ...p, path: Object.fromEntries(Object.keys(p.path).map((k) => [k, s.startsWith('%') ? s : encodeUrlValue(s)])) }),
    ),
    'bad-query': on(
      'bad-query',
      () => fc.dictionary(fc.constantFrom(...queryParams.map((param) => param.name), 'unknown', 'page'), weirdStrings.map((s) => (s.startsWith('%') ? s : encodeUrlValue(s))), { maxKeys: 3 }),
      (p, query) => build('bad-query', { ...p, query: { ...p.query, ...query } }),
    ),
  };
  const drawn = Object.entries(KINDS).filter(([kind]) => kind !== 'refusal' || refusal);
  const any = fc.oneof(...drawn.map(([kind, weight]) => ({ arbitrary: byKind[kind as Kind], weight })));
  return { any, valid: byKind.valid };
}

/** The form with every file part under another file name. */
function renamedFiles(form: FormData, name: string): FormData {
  const out = new FormData();
  for (const [key, value] of form) typeof value === 'string' ? out.append(key, value) : out.append(key, value, name);
  return out;
}

function formText(body: unknown): string {
  return new URLSearchParams(Object.entries((body ?? {}) as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)])).toString();
}

/** Optional query parameters with values from their schemas (percent-encoded), some left out. */
function optionalQuery(doc: OpenApiDocument, queryParams: any[]): fc.Arbitrary<Record<string, string>> {
  const optional = queryParams.filter((p) => !p.required);
  return fc
    .record(Object.fromEntries(optional.map((p) => [p.name, fc.option(valueOf(doc, p.schema), { nil: undefined })])))
    .map((q) => Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]) => [k, encodeUrlValue(typeof v === 'object' ? JSON.stringify(v) : String(v))])));
}

export async function send(baseUrl: string, req: FuzzRequest): Promise<RawAnswer> {
  let { body, headers } = req;
  if (body instanceof FormData) {
    const encoded = new Response(body);
    headers = { ...headers, 'content-type': encoded.headers.get('content-type')! };
    body = Buffer.from(await encoded.arrayBuffer());
  }
  return rawRequest(baseUrl, { method: req.method, path: req.path, headers, body });
}
