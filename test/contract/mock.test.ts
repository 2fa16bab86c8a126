// The Prism mock answers every operation of the joined bundle like the platform: each operation is
// called with its own request example, once per documented status, and every answer must carry
// that status and a body valid against the contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contractValidator,
  deref,
  examplesOf,
  loadPlatform,
  operationsOf,
  parametersOf,
  PLATFORM_BUNDLE,
  responsePointer,
  type Operation,
} from '../support/contract.ts';
import { freePort, startProcess, type Started } from '../support/processes.ts';

const doc = loadPlatform();
const validate = contractValidator(doc);
const operations = operationsOf(doc);
let prism: Started;
let baseUrl: string;

beforeAll(async () => {
  const port = await freePort();
  prism = await startProcess(
    'node_modules/.bin/prism',
    ['mock', PLATFORM_BUNDLE, '--host', '127.0.0.1', '--port', String(port)],
    /Prism is listening/,
  );
  baseUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await prism?.stop();
});

function exampleValue(param: any): string {
  const [, value] = examplesOf(doc, param)[0] ?? [];
  if (value !== undefined) return String(value);
  const schema = deref(doc, param.schema ?? {});
  if (schema.examples?.length) return String(schema.examples[0]);
  if (schema.enum?.length) return String(schema.enum[0]);
  throw new Error(`parameter ${param.name} has no example`);
}

function securityHeaders(op: Operation): Record<string, string> {
  const requirements = op.operation.security ?? doc.security ?? [];
  const first = requirements[0] ?? {};
  const scheme = Object.keys(first)[0];
  if (!scheme) return {};
  const definition = deref(doc, doc.components.securitySchemes?.[scheme]);
  if (definition.type === 'http' && definition.scheme === 'basic') {
    return { authorization: `Basic ${Buffer.from('demo-user:demo-password').toString('base64')}` };
  }
  return { authorization: 'Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJkZW1vIn0.c2ln' };
}

function buildRequest(op: Operation): { url: string; init: RequestInit } {
  let path = op.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = { ...securityHeaders(op) };
  for (const param of parametersOf(doc, op)) {
    if (param.in === 'path') path = path.replace(`{${param.name}}`, encodeURIComponent(exampleValue(param)));
    if (param.in === 'query' && param.required) query.set(param.name, exampleValue(param));
    if (param.in === 'header' && param.required) headers[param.name] = exampleValue(param);
  }
  const init: RequestInit = { method: op.method.toUpperCase(), headers };
  const content = deref(doc, op.operation.requestBody ?? {}).content ?? {};
  const [mediaType, media] = Object.entries<any>(content)[0] ?? [];
  if (mediaType) {
    const [, body] = examplesOf(doc, media)[0] ?? [];
    if (mediaType === 'application/json') {
      headers['content-type'] = mediaType;
      init.body = JSON.stringify(body);
    } else if (mediaType === 'application/x-www-form-urlencoded') {
      headers['content-type'] = mediaType;
      init.body = new URLSearchParams(body as Record<string, string>).toString();
    } else if (mediaType === 'multipart/form-data') {
      const form = new FormData();
      const schema = deref(doc, media.schema);
      for (const [name, prop] of Object.entries<any>(schema.properties ?? {})) {
        const binary = prop.format === 'binary' || prop.contentMediaType;
        if (binary) form.set(name, new Blob([Buffer.from('89504e470d0a1a0a', 'hex')], { type: 'image/png' }), 'product.png');
      }
      init.body = form;
    } else {
      throw new Error(`no request builder for ${mediaType}`);
    }
  }
  const qs = query.toString();
  return { url: `${baseUrl}${path}${qs ? `?${qs}` : ''}`, init };
}

async function readBody(response: Response): Promise<{ mediaType: string; body: unknown }> {
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const text = await response.text();
  return { mediaType, body: mediaType.endsWith('json') ? JSON.parse(text) : text };
}

describe('Prism mock of the joined bundle', () => {
  it('covers the 15 operations of the seed, plus the reference-only sandbox area', () => {
    const sandbox = operations.filter((o) => o.path.startsWith('/sandbox/v1/'));
    expect(sandbox.map((o) => o.operationId).sort()).toEqual(
      ['createSandboxPaymentLink', 'createSandboxPlan', 'createSandboxSeller', 'getSandboxJwks'],
    );
    expect(operations.filter((o) => !sandbox.includes(o)).map((o) => o.operationId).sort()).toEqual(
      [
        'applySubscriptionEvent',
        'createPaymentIntent',
        'createSubscription',
        'getBusinessConfiguration',
        'getPaymentLinkByShortId',
        'getPaymentLinkOrder',
        'getSeller',
        'getSubscription',
        'issueAccessToken',
        'issueAccessTokenWithBasicAuth',
        'listPaymentLinks',
        'updateFloatingInstallment',
        'updatePlanStatus',
        'updateTechnicalConfiguration',
        'uploadProductImage',
      ].sort(),
    );
  });

  for (const op of operations) {
    const statuses = Object.keys(op.operation.responses);
    const success = statuses.find((s) => s.startsWith('2'))!;

    it(`${op.operationId}: its request example is accepted and answered with ${success}`, async () => {
      const { url, init } = buildRequest(op);
      const response = await fetch(url, init);
      const { mediaType, body } = await readBody(response);
      expect({ status: response.status, body }).toMatchObject({ status: Number(success) });
      const check = validate(responsePointer(doc, op, success, mediaType));
      expect(check(body), JSON.stringify(check.errors)).toBe(true);
      for (const [name, header] of Object.entries<any>(deref(doc, op.operation.responses[success]).headers ?? {})) {
        if (deref(doc, header).required) expect(response.headers.get(name), name).not.toBeNull();
      }
    });

    for (const status of statuses.filter((s) => s !== success)) {
      it(`${op.operationId}: answers ${status} with a body valid against the contract`, async () => {
        const { url, init } = buildRequest(op);
        const response = await fetch(url, { ...init, headers: { ...(init.headers as object), prefer: `code=${status}` } });
        expect(response.status).toBe(Number(status));
        const { mediaType, body } = await readBody(response);
        const declared = Object.keys(deref(doc, op.operation.responses[status]).content ?? {});
        if (declared.length === 0) return;
        expect(declared).toContain(mediaType);
        const check = validate(responsePointer(doc, op, status, mediaType));
        expect(check(body), JSON.stringify(check.errors)).toBe(true);
      });
    }
  }
});
