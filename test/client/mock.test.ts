// The platform client against the Prism mock, for every operation of the contract: each is called
// through the client with its own request example, once per documented status, and the client's
// `data` or `error` must be valid against the contract. The token comes from the mock's token
// endpoint; the contract's security decides which calls carry it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient, type RequestObservation } from '../../client/index.ts';
import { contractValidator, loadPlatform, operationsOf, PLATFORM_BUNDLE, responsePointer, type Operation } from '../support/contract.ts';
import { callerCredentialHeaders, exampleRequest, securityKinds } from '../support/examples.ts';
import { freePort, startProcess, type Started } from '../support/processes.ts';

const doc = loadPlatform();
const validate = contractValidator(doc);
const operations = operationsOf(doc);
let prism: Started;
let client: PlatformClient;
const observations: RequestObservation[] = [];
const sentAuthorization = new Map<string, string | null>();

beforeAll(async () => {
  const port = await freePort();
  prism = await startProcess('node_modules/.bin/prism', ['mock', PLATFORM_BUNDLE, '--host', '127.0.0.1', '--port', String(port)], /Prism is listening/);
  client = createPlatformClient({
    baseUrl: `http://127.0.0.1:${port}`,
    clientId: 'demo-seller-client',
    clientSecret: 'demo-seller-secret',
    // Each documented status once, as answered: the mock answers a preferred 429 or 503 every time.
    maxRetries: 0,
    observe: (o) => observations.push(o),
    fetch: (request) => {
      sentAuthorization.set(`${request.method} ${new URL(request.url).pathname}`, request.headers.get('authorization'));
      return fetch(request);
    },
  });
});

afterAll(async () => {
  await prism?.stop();
});

type LooseCall = (method: string, path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** The operation called through the client with its example; `prefer` picks a documented status. */
function call(op: Operation, prefer?: string) {
  const example = exampleRequest(doc, op);
  const headers: Record<string, string> = { ...callerCredentialHeaders(doc, op) };
  if (example.mediaType && example.mediaType !== 'multipart/form-data') headers['content-type'] = example.mediaType;
  if (prefer) headers.prefer = prefer;
  // The loop is over every operation at once, so the path is not a literal here; typed calls are
  // in types.test.ts and the README.
  return (client.request as unknown as LooseCall)(op.method, op.path, {
    params: { path: example.path, query: example.query, header: example.header },
    body: example.body,
    headers,
  });
}

function mediaTypeOf(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
}

describe('platform client against the Prism mock', () => {
  for (const op of operations) {
    const statuses = Object.keys(op.operation.responses);
    const success = statuses.find((s) => s.startsWith('2'))!;
    const bearer = securityKinds(doc, op).includes('oauth2');

    it(`${op.operationId}: answered ${success} with data valid against the contract`, async () => {
      const { data, error, response } = await call(op);
      expect({ status: response.status, error }).toMatchObject({ status: Number(success), error: undefined });
      const check = validate(responsePointer(doc, op, success, mediaTypeOf(response)));
      expect(check(data), JSON.stringify(check.errors)).toBe(true);
      const seen = observations.filter((o) => o.operationId === op.operationId);
      expect(seen.at(-1)).toMatchObject({ authenticated: bearer, status: Number(success), attempt: 1 });
    });

    for (const status of statuses.filter((s) => s !== success)) {
      it(`${op.operationId}: answered ${status} with an error valid against the contract`, async () => {
        const { data, error, response } = await call(op, `code=${status}`);
        expect(response.status).toBe(Number(status));
        expect(data).toBeUndefined();
        const check = validate(responsePointer(doc, op, status, mediaTypeOf(response)));
        expect(check(error), JSON.stringify(check.errors)).toBe(true);
      });
    }
  }

  it('sends the access token to the oauth2 operations only, never to the public short-id lookup', () => {
    for (const op of operations) {
      const example = exampleRequest(doc, op);
      const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(example.path[name]!));
      const sent = sentAuthorization.get(`${op.method.toUpperCase()} ${path}`);
      const own = callerCredentialHeaders(doc, op).authorization ?? null;
      if (securityKinds(doc, op).includes('oauth2')) expect(sent, op.operationId).toMatch(/^Bearer \S+$/);
      else expect(sent, op.operationId).toBe(own);
    }
    expect(sentAuthorization.get('GET /dpy/payment-link/v1/payment-links/by-short-id/Xk7pQ2aZ')).toBeNull();
  });
});
