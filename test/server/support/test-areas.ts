// A few operations of the other areas, written here only to exercise the server's machinery
// (bearer check, error shapes, contract violations) before those areas exist. They mirror the
// error bodies the areas' contracts decide; the real operations come with each area.
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Router } from 'express';
import { parse, stringify } from 'yaml';
import type { AreaRoutes } from '../../../server/app.ts';
import { accessTokenOf, isGuid } from '../../../server/authentication/bearer.ts';
import { ApiError } from '../../../server/http/errors.ts';
import { StoreUnavailable } from '../../../server/store/store.ts';
import { AUTH_BUNDLE } from './server.ts';

const json = (schema: object) => ({ description: 'Test response.', content: { 'application/json': { schema } } });
const str = { type: 'string' };
const strings = (...names: string[]) => Object.fromEntries(names.map((n) => [n, str]));
const oauth2 = [{ oauth2: ['digital-plataform:gateway-api'] }];

const PaymentLinkError = {
  type: 'object',
  required: ['error_code', 'message', 'status_code'],
  properties: {
    ...strings('error_code', 'message'),
    status_code: { type: 'integer' },
    details: { type: 'array', items: { type: 'object', required: ['message', 'path'], properties: strings('message', 'path') } },
  },
};
const WebCheckoutError = {
  type: 'object',
  required: ['message'],
  properties: { ...strings('code', 'message'), details: { type: 'array', items: { type: 'object', required: ['message'], properties: strings('field', 'message') } } },
};
const RecurrenceError = {
  type: 'object',
  properties: { ...strings('message', 'name'), status_code: { type: 'integer' }, details: { type: 'array', items: { type: 'object' } } },
};

const TEST_PATHS = {
  '/dpy/payment-link/v1/sellers': {
    get: {
      security: oauth2,
      responses: {
        200: json({ type: 'object', required: ['seller_id'], properties: { seller_id: { type: 'string', format: 'uuid' } } }),
        400: json(PaymentLinkError),
        401: json(PaymentLinkError),
      },
    },
  },
  // Answers a body that breaks its own schema (currency must be a string).
  '/dpy/payment-link/v1/payment-links/business-configurations': {
    get: { security: oauth2, responses: { 200: json({ type: 'object', properties: { currency: str } }), 401: json(PaymentLinkError) } },
  },
  // Documented but not implemented by any router.
  '/dpy/payment-link/v1/not-implemented': { get: { security: oauth2, responses: { 200: json({ type: 'array' }) } } },
  '/dpy/web-checkout/v1/payment-intent': {
    post: {
      security: oauth2,
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          required: ['payment'],
          properties: { payment: { type: 'object', required: ['amount', 'currency'], properties: { amount: { type: 'integer', minimum: 1 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } } } },
        }),
      },
      responses: {
        201: json({ type: 'object', required: ['payment_intent_id'], properties: { payment_intent_id: str } }),
        400: json(WebCheckoutError),
        401: { description: 'Plain string.', content: { 'text/plain': { schema: str } } },
        422: json(WebCheckoutError),
      },
    },
  },
  '/rpy/be-plan/v1/plans/{plan_id}/status/{status}': {
    patch: {
      security: oauth2,
      parameters: [
        { name: 'plan_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
        { name: 'status', in: 'path', required: true, schema: { type: 'string', enum: ['active', 'inactive'] } },
      ],
      responses: { 200: json({ type: 'object' }), 400: json(RecurrenceError), 401: json(RecurrenceError) },
    },
  },
  // Documents no 409: the route's 409 error body breaks the contract.
  '/dpm/webhooks/v1/subscriptions/{event_name}/events/{event_id}': {
    patch: {
      parameters: [
        { name: 'event_name', in: 'path', required: true, schema: str },
        { name: 'event_id', in: 'path', required: true, schema: str },
      ],
      responses: { 200: json({ type: 'object' }) },
    },
  },
  '/rpy/be-subscription/v1/subscriptions/{subscription_id}': {
    get: { security: oauth2, parameters: [{ name: 'subscription_id', in: 'path', required: true, schema: str }], responses: { 200: json({ type: 'object' }), 500: json(RecurrenceError) } },
  },
};

/** The authentication bundle plus the test operations, as a file for the validator. */
export async function writeTestSpec(): Promise<string> {
  const spec = parse(await readFile(AUTH_BUNDLE, 'utf8'));
  spec.paths = { ...spec.paths, ...TEST_PATHS };
  // As in the contract: a relative tokenUrl (which the validator's own OAS schema would refuse).
  spec.components.securitySchemes.oauth2 = {
    type: 'oauth2',
    flows: { clientCredentials: { tokenUrl: '/authentication/oauth2/-core/access_token', scopes: { 'digital-plataform:gateway-api': 'All' } } },
  };
  const file = join(tmpdir(), `server-test-spec-${process.pid}.yaml`);
  await writeFile(file, stringify(spec));
  return file;
}

export const testAreas: AreaRoutes = ({ requireAccessToken }) =>
  Router()
    .get('/dpy/payment-link/v1/sellers', requireAccessToken, (req, res) => {
      const { sellerId } = accessTokenOf(req);
      if (!isGuid(sellerId)) {
        const problem = { location: 'token' as const, pointer: '/x-seller-id', message: 'x-seller-id must be a valid GUID' };
        throw new ApiError(400, 'guid_error', 'The seller id must be a valid GUID', [problem]);
      }
      res.json({ seller_id: sellerId });
    })
    .get('/dpy/payment-link/v1/payment-links/business-configurations', requireAccessToken, (_req, res) => {
      res.json({ currency: 986 });
    })
    .post('/dpy/web-checkout/v1/payment-intent', requireAccessToken, (_req, res) => {
      res.status(201).json({ payment_intent_id: 'c1a2b3c4-d5e6-4f70-8a9b-0c1d2e3f4a5b' });
    })
    .patch('/rpy/be-plan/v1/plans/:plan_id/status/:status', requireAccessToken, (_req, res) => {
      res.json({});
    })
    .patch('/dpm/webhooks/v1/subscriptions/:event_name/events/:event_id', () => {
      throw new ApiError(409, undefined, 'Idempotency key already used with a different request');
    })
    .get('/rpy/be-subscription/v1/subscriptions/:subscription_id', requireAccessToken, (req) => {
      if (req.params.subscription_id === 'store-down') throw new StoreUnavailable('The PostgreSQL server at db.example:5432 (the database URL) cannot be reached: the connection was refused');
      throw new Error('database exploded at /srv/app/secret-place.ts:42');
    });
