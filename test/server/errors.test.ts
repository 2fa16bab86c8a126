// Which area a path belongs to, and the error body each area answers.
import { describe, expect, it } from 'vitest';
import { areaOf } from '../../server/http/areas.ts';
import { ApiError, ContractViolation } from '../../server/http/errors.ts';
import { renderError } from '../../server/error-bodies.ts';
import { expectNoStackTrace } from './support/server.ts';
import { contractValidator, loadPlatform, operationsOf, responsePointer } from '../support/contract.ts';

describe('areaOf', () => {
  it.each([
    ['/authentication/oauth2/-core/access_token', 'token-body-credentials'],
    ['/authentication/oauth2/access_token', 'token-basic-credentials'],
    ['/dpy/payment-link/v1/payment-links', 'payment-link'],
    ['/dpy/payment-link/v1', 'payment-link'],
    ['/dpy/payment-link/v10/payment-links', 'outside'],
    ['/dpy/web-checkout/v1/payment-intent', 'web-checkout'],
    ['/rpy/be-subscription/v1/subscriptions/1', 'subscription'],
    ['/rpy/be-plan/v1/plans/1/status/active', 'plan'],
    ['/dpm/webhooks/v1/subscriptions/x/events/y', 'subscription-webhook'],
    ['/sandbox/v1/jwks', 'sandbox'],
    ['/authentication/oauth2/other', 'outside'],
    ['/', 'outside'],
  ])('%s → %s', (path, area) => expect(areaOf(path)).toBe(area));
});

describe('renderError', () => {
  const bug = new Error('secret detail at /srv/app/file.ts:12:3');
  const at = (path: string, method = 'GET') => ({ method, path });

  it.each([
    ['/authentication/oauth2/-core/access_token', { error_code: 'internal_error', message: 'Internal server error', status_code: 500 }],
    ['/authentication/oauth2/access_token', { error: 'server_error', error_description: 'Internal server error' }],
    ['/dpy/payment-link/v1/sellers', { error_code: 'internal_error', message: 'Internal server error', status_code: 500 }],
    ['/dpy/web-checkout/v1/technical-configurations', { message: 'Internal server error', details: [] }],
    ['/rpy/be-subscription/v1/subscriptions', { message: 'Internal server error', name: 'be-subscription', status_code: 500 }],
    ['/rpy/be-plan/v1/plans/p/status/active', { message: 'Internal server error', name: 'be-plan', status_code: 500 }],
    ['/dpm/webhooks/v1/subscriptions/e/events/1', { message: 'Internal server error', name: 'dpm-webhooks', status_code: 500 }],
    ['/sandbox/v1/sellers', { error_code: 'internal_error', message: 'Internal server error', status_code: 500 }],
  ])('renders an unexpected error under %s as a 500 that reveals nothing', (path, body) => {
    const rendered = renderError(bug, at(path));
    expect(rendered).toEqual({ status: 500, headers: {}, json: body });
    expectNoStackTrace(rendered.json);
  });

  it('answers each operation\'s unexpected failure as the 500 its contract documents', () => {
    const doc = loadPlatform();
    const validate = contractValidator(doc);
    for (const op of operationsOf(doc)) {
      const where = `${op.method.toUpperCase()} ${op.path}`;
      expect(op.operation.responses['500'], `${where} documents 500`).toBeDefined();
      const rendered = renderError(bug, at(op.path.replace(/\{[^}]+\}/g, 'x'), op.method.toUpperCase()));
      expect(rendered.status, where).toBe(500);
      const check = validate(responsePointer(doc, op, '500', 'application/json'));
      expect(check(rendered.json), `${where}: ${JSON.stringify(check.errors)}`).toBe(true);
    }
  });

  it('renders a contract violation as a plain 500', () => {
    const violation = new ContractViolation('GET /dpy/payment-link/v1/sellers', 200, [{ path: '/response/seller_id', message: 'must be string' }]);
    expect(renderError(violation, at('/dpy/payment-link/v1/sellers')).status).toBe(500);
  });

  it('keeps the code, message and status of an ApiError', () => {
    const notFound = new ApiError(404, 'payment_link_not_found', 'Payment Link not found');
    expect(renderError(notFound, at('/dpy/payment-link/v1/payment-links/by-short-id/x')).json).toEqual({
      error_code: 'payment_link_not_found',
      message: 'Payment Link not found',
      status_code: 404,
    });
  });

  it('gives every payment link 400 its details, even when empty', () => {
    expect(renderError(new ApiError(400, undefined, 'Invalid request'), at('/dpy/payment-link/v1/payment-links')).json).toEqual({
      error_code: 'invalid_request',
      message: 'Invalid request',
      status_code: 400,
      details: [],
    });
  });

  it('answers 401 on payment intent creation as plain text, elsewhere in web checkout as JSON', () => {
    const unauthorized = new ApiError(401, 'unauthorized', 'Missing bearer token');
    expect(renderError(unauthorized, at('/dpy/web-checkout/v1/payment-intent', 'POST'))).toEqual({ status: 401, headers: {}, text: 'Unauthorized' });
    expect(renderError(unauthorized, at('/dpy/web-checkout/v1/technical-configurations', 'PATCH')).json).toEqual({
      code: 'unauthorized',
      message: 'Missing bearer token',
      details: [],
    });
  });

  it('renders body parser errors (http-errors) with their 4xx status', () => {
    const tooLarge = Object.assign(new Error('request entity too large'), { status: 413, expose: true, type: 'entity.too.large' });
    expect(renderError(tooLarge, at('/rpy/be-plan/v1/plans/p/status/active', 'PATCH'))).toEqual({
      status: 413,
      headers: {},
      json: { message: 'Request body too large', name: 'be-plan', status_code: 413 },
    });
  });
});
