// The Prism mock answers every operation of the joined bundle like the platform: each operation is
// called with its own request example, once per documented status, and every answer must carry
// that status and a body valid against the contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contractValidator,
  deref,
  loadPlatform,
  operationsOf,
  PLATFORM_BUNDLE,
  responsePointer,
  type Operation,
} from '../support/contract.ts';
import { callerCredentialHeaders, DEMO_BEARER, exampleRequest, securityKinds } from '../support/examples.ts';
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

/** The operation's own example as a plain fetch, with credentials for whatever scheme it asks for. */
function buildRequest(op: Operation): { url: string; init: RequestInit } {
  const example = exampleRequest(doc, op);
  let path = op.path;
  for (const [name, value] of Object.entries(example.path)) path = path.replace(`{${name}}`, encodeURIComponent(value));
  const oauth2: Record<string, string> = securityKinds(doc, op).includes('oauth2') ? { authorization: `Bearer ${DEMO_BEARER}` } : {};
  const headers: Record<string, string> = { ...example.header, ...oauth2, ...callerCredentialHeaders(doc, op) };
  const init: RequestInit = { method: op.method.toUpperCase(), headers };
  if (example.mediaType === 'application/json') {
    headers['content-type'] = example.mediaType;
    init.body = JSON.stringify(example.body);
  } else if (example.mediaType === 'application/x-www-form-urlencoded') {
    headers['content-type'] = example.mediaType;
    init.body = new URLSearchParams(example.body as Record<string, string>).toString();
  } else if (example.mediaType === 'multipart/form-data') {
    init.body = example.body as FormData;
  } else if (example.mediaType) {
    throw new Error(`no request builder for ${example.mediaType}`);
  }
  const qs = new URLSearchParams(example.query).toString();
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
      [
        'advanceSandboxTestClock',
        'cancelSandboxSubscription',
        'createSandboxPaymentLink',
        'createSandboxPlan',
        'createSandboxSeller',
        'createSandboxTestClock',
        'getSandboxJwks',
        'getSandboxNotification',
        'getSandboxTestClock',
        'listSandboxNotifications',
        'listSandboxSubscriptionCharges',
        'redeliverSandboxNotification',
        'rotateSandboxSigningKey',
      ],
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
