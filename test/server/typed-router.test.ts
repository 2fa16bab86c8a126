// Handlers typed by the contract: `tsc` (make typecheck) fails if any `@ts-expect-error` below stops
// being an error, i.e. if a body that breaks its operation started to compile.
import { describe, expect, it } from 'vitest';
import { expressPath, typedRouter } from '../../server/http/typed-router.ts';

describe('typedRouter', () => {
  it('turns contract paths into Express paths', () => {
    expect(expressPath('/dpy/payment-link/v1/payment-links/{link_id}/orders/{order_id}')).toBe('/dpy/payment-link/v1/payment-links/:link_id/orders/:order_id');
    expect(expressPath('/authentication/oauth2/-core/access_token')).toBe('/authentication/oauth2/-core/access_token');
  });

  it('types request and response bodies by path and method', () => {
    const api = typedRouter()
      .post('/authentication/oauth2/-core/access_token', (req, res) => {
        const clientId: string = req.body.client_id;
        void clientId;
        // @ts-expect-error the first form's body has no `password`
        void req.body.password;
        res.json({ access_token: 'jwt', token_type: 'Bearer', expires_in: 3599, scope: 'digital-plataform:gateway-api' });
        // @ts-expect-error expires_in is an integer
        res.json({ access_token: 'jwt', token_type: 'Bearer', expires_in: '3599', scope: 's' });
        // @ts-expect-error error bodies are not sent by handlers: they throw ApiError
        res.json({ error_code: 'invalid_request', message: 'no', status_code: 400 });
      })
      .post('/authentication/oauth2/access_token', (_req, res) => {
        // @ts-expect-error the second form's token_type is the constant `Bearer`
        res.json({ access_token: 'jwt', token_type: 'bearer', expires_in: 3599, scope: 's' });
      });
    // @ts-expect-error the contract has no GET on the token endpoint
    api.get('/authentication/oauth2/-core/access_token', () => {});
    // @ts-expect-error a path the contract does not have
    api.post('/authentication/oauth2/token', () => {});

    const routes = api.router.stack.map((layer) => layer.route?.path);
    expect(routes).toContain('/authentication/oauth2/-core/access_token');
    expect(routes).toContain('/authentication/oauth2/access_token');
  });
});
