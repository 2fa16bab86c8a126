// PATCH /dpy/web-checkout/v1/technical-configurations through the whole server: the merge, the
// defaults, the write-only password (stored for the webhook, never answered or logged), the URL
// rules, every status, and two sellers each with their own configuration, on every store under test.
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webCheckoutRepository } from '../../server/web-checkout/repository.ts';
import { PLATFORM_BUNDLE } from '../support/contract.ts';
import { expectNoStackTrace, mintToken, startTestServer, type TestServer } from './support/server.ts';
import { storesUnderTest } from './support/web-checkout.ts';
import { insertSeller, tokenOf, type InsertedSeller } from './support/sellers.ts';
import { PUBLIC_V4, PUBLIC_V6, tableResolver } from './support/resolvers.ts';

const PATH = '/dpy/web-checkout/v1/technical-configurations';
const DEFAULT_LAYOUT = { color: { primary: '#0B3B8C', accent: '#F5A623' }, type_face: 'Platform Micro Text' };
const NOTIFICATION = { url: 'https://api.lojaaurora.com.br/webhooks/checkout', user_credentials: { user: 'aurora-webhook', password: 's3nh4-F0rte-2026' } };

function expectError(res: Response, status: number, body: unknown) {
  expect({ status: res.status, body: res.body }).toEqual({ status, body });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expectNoStackTrace(res.body);
}
const validationError = (details: Array<{ field?: string; message: string }>) => ({ code: 'validation_error', message: 'One or more fields failed validation', details });

describe.each(storesUnderTest())('updateTechnicalConfiguration on $name', ({ open }) => {
  let server: TestServer;
  let strictServer: TestServer;
  const sellers: Record<string, InsertedSeller> = {};
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer({ store: await open(), config: { apiSpec: PLATFORM_BUNDLE } });
    // A second instance on the same database, for a shared sandbox that refuses private addresses;
    // its host names resolve from a table, as /etc/hosts would answer them.
    strictServer = await startTestServer({
      store: server.store,
      config: { apiSpec: PLATFORM_BUNDLE, allowPrivateNotificationUrls: false },
      resolveHostName: tableResolver({
        'api.lojaaurora.com.br': [PUBLIC_V4, PUBLIC_V6],
        'merchant.example': ['127.0.0.1'],
        'metadata.example': ['169.254.169.254'],
        'mapped.example': ['::ffff:127.0.0.1'],
        'mixed.example': [PUBLIC_V4, '10.0.0.7'],
        'intranet.example': ['fd00::8'],
      }),
    });
    const options = { first: {}, second: { country: 'MX', currencies: ['MXN'] }, checkoutOff: { services: { checkout: false } }, fresh: {}, strict: {} };
    for (const [name, o] of Object.entries(options)) {
      sellers[name] = await insertSeller(server.store, o);
      tokens[name] = await tokenOf(server, sellers[name]!);
    }
  });
  afterAll(async () => {
    await strictServer?.close({ keepStore: true });
    await server?.close();
  });

  const patch = (who: string, body: unknown, on: TestServer = server) => on.http.patch(PATH).set('Authorization', `Bearer ${tokens[who]}`).send(body as object);
  const storedOf = (who: string) => webCheckoutRepository(server.store).findTechnicalConfiguration(sellers[who]!.sellerId);

  describe('200 and the merge', () => {
    it('starts from the defaults: changing only the colours keeps the type face', async () => {
      expect(await storedOf('first')).toBeUndefined();
      const res = await patch('first', { layout_customization: { color: { primary: '#1D4ED8', accent: '#F59E0B' } } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ layout_customization: { color: { primary: '#1D4ED8', accent: '#F59E0B' }, type_face: 'Platform Micro Text' } });
      expect(await storedOf('first')).toMatchObject({ primaryColor: '#1D4ED8', accentColor: '#F59E0B', typeFace: 'Platform Micro Text', notificationUrl: null });
    });

    it('merges each later update property by property and answers the whole configuration', async () => {
      expect((await patch('first', { layout_customization: { color: { accent: '#112233' } } })).body.layout_customization).toEqual({
        color: { primary: '#1D4ED8', accent: '#112233' },
        type_face: 'Platform Micro Text',
      });
      expect((await patch('first', { layout_customization: { type_face: 'Montserrat' }, success_url: 'https://shop.example/ok' })).body).toEqual({
        layout_customization: { color: { primary: '#1D4ED8', accent: '#112233' }, type_face: 'Montserrat' },
        success_url: 'https://shop.example/ok',
      });
      const res = await patch('first', { error_url: 'https://shop.example/error', brand_new_property: { a: 1 } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        layout_customization: { color: { primary: '#1D4ED8', accent: '#112233' }, type_face: 'Montserrat' },
        success_url: 'https://shop.example/ok',
        error_url: 'https://shop.example/error',
      });
    });

    it('stores a complete notification, answers it without the password, and never logs the password', async () => {
      const res = await patch('first', { notification: NOTIFICATION });
      expect(res.status).toBe(200);
      expect(res.body.notification).toEqual({ url: NOTIFICATION.url, authentication_type: 'user_credentials', user_credentials: { user: 'aurora-webhook' } });
      expect(JSON.stringify(res.body)).not.toContain(NOTIFICATION.user_credentials.password);
      // Stored recoverable: the webhook sender builds `Basic base64(user:password)` from it.
      expect(await storedOf('first')).toMatchObject({
        notificationUrl: NOTIFICATION.url,
        notificationAuthenticationType: 'user_credentials',
        notificationUser: 'aurora-webhook',
        notificationPassword: 's3nh4-F0rte-2026',
      });
      expect(server.logs.text).not.toContain('s3nh4-F0rte-2026');
    });

    it('rotates only the password, keeping the url and the user', async () => {
      const res = await patch('first', { notification: { user_credentials: { password: 'n0va-S3nha-Abr2026' } } });
      expect(res.status).toBe(200);
      expect(res.body.notification).toEqual({ url: NOTIFICATION.url, authentication_type: 'user_credentials', user_credentials: { user: 'aurora-webhook' } });
      expect(await storedOf('first')).toMatchObject({ notificationUser: 'aurora-webhook', notificationPassword: 'n0va-S3nha-Abr2026' });
      expect(server.logs.text).not.toContain('n0va-S3nha-Abr2026');
    });

    it('accepts a loopback notification URL in the local sandbox (allowPrivateNotificationUrls true)', async () => {
      const res = await patch('fresh', { notification: { ...NOTIFICATION, url: 'http://127.0.0.1:9000/hook' } });
      expect(res.status).toBe(200);
      expect(res.body.notification.url).toBe('http://127.0.0.1:9000/hook');
    });
  });

  describe('two sellers, two configurations', () => {
    it('each seller updates and reads only its own configuration', async () => {
      // The first seller's own configuration, set here so that the test stands alone (`-t`).
      expect((await patch('first', { layout_customization: { type_face: 'Montserrat' }, notification: NOTIFICATION })).status).toBe(200);
      const second = await patch('second', { layout_customization: { type_face: 'Roboto' }, success_url: 'https://tienda.example/ok' });
      expect(second.body).toEqual({ layout_customization: { ...DEFAULT_LAYOUT, type_face: 'Roboto' }, success_url: 'https://tienda.example/ok' });
      const first = await patch('first', { success_url: 'https://shop.example/ok2' });
      expect(first.body.layout_customization.type_face).toBe('Montserrat');
      expect(first.body.notification.user_credentials.user).toBe('aurora-webhook');
      expect(await storedOf('second')).toMatchObject({ typeFace: 'Roboto', successUrl: 'https://tienda.example/ok', notificationUrl: null, notificationPassword: null });
      expect(await storedOf('first')).toMatchObject({ typeFace: 'Montserrat', successUrl: 'https://shop.example/ok2' });
    });
  });

  describe('400', () => {
    it.each([
      ['an empty body', {}, undefined],
      ['an empty nested object', { layout_customization: {} }, 'layout_customization'],
      ['an empty colour object', { layout_customization: { color: {} } }, 'layout_customization.color'],
      ['empty credentials', { notification: { user_credentials: {} } }, 'notification.user_credentials'],
    ])('answers %s with invalid_request and changes nothing', async (_name, body, field) => {
      const before = await storedOf('second');
      const message = `${field ?? 'body'} must NOT have fewer than 1 properties`;
      expectError(await patch('second', body), 400, { code: 'invalid_request', message: 'One or more required fields are missing', details: [field ? { field, message } : { message }] });
      expect(await storedOf('second')).toEqual(before);
    });

    it('answers no body with invalid_request', async () => {
      const message = 'The request body must be a JSON object (Content-Type: application/json)';
      expectError(await server.http.patch(PATH).set('Authorization', `Bearer ${tokens.second}`), 400, { code: 'invalid_request', message, details: [{ message }] });
    });

    it('answers a token whose seller id is not a GUID with guid_error', async () => {
      const token = await mintToken(server, 'seller-123');
      const res = await server.http.patch(PATH).set('Authorization', `Bearer ${token}`).send({ success_url: 'https://a.example' });
      expectError(res, 400, { code: 'guid_error', message: 'The seller id must be a valid GUID', details: [{ field: 'token.x-seller-id', message: '"seller-123" is not a valid GUID' }] });
    });
  });

  describe('401', () => {
    it('answers a missing token with the JSON error object (not the plain string of payment intents)', async () => {
      const res = await server.http.patch(PATH).send({ success_url: 'https://a.example' });
      expectError(res, 401, { code: 'unauthorized', message: 'Missing bearer token', details: [] });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="payment-platform"');
    });
  });

  describe('404', () => {
    it('answers a seller whose checkout service is off: it has no configuration', async () => {
      expectError(await patch('checkoutOff', { success_url: 'https://a.example' }), 404, {
        code: 'not_found',
        message: 'Web checkout configuration not found',
        details: [{ field: 'services.checkout', message: 'the seller has no web checkout configuration because its checkout service is off' }],
      });
      expect(await storedOf('checkoutOff')).toBeUndefined();
    });

    it('answers when the token\'s seller no longer exists', async () => {
      const gone = await insertSeller(server.store);
      const token = await tokenOf(server, gone);
      await server.store.query('DELETE FROM sellers WHERE seller_id = $1', [gone.sellerId]);
      const res = await server.http.patch(PATH).set('Authorization', `Bearer ${token}`).send({ success_url: 'https://a.example' });
      expectError(res, 404, { code: 'not_found', message: 'Seller not found', details: [{ field: 'token.x-seller-id', message: `No seller with id ${gone.sellerId}` }] });
    });
  });

  describe('422 (and nothing changes)', () => {
    const unchanged = async (who: string, call: () => Promise<Response>, body: unknown) => {
      const before = await storedOf(who);
      expectError(await call(), 422, body);
      expect(await storedOf(who)).toEqual(before);
    };

    it.each([
      ['null for a URL', { success_url: null }, 'success_url', 'success_url must be string'],
      ['null for a nested object', { layout_customization: { color: null } }, 'layout_customization.color', 'layout_customization.color must be object'],
      ['null for the password', { notification: { user_credentials: { password: null } } }, 'notification.user_credentials.password', 'notification.user_credentials.password must be string'],
      ['a colour that is not #RRGGBB', { layout_customization: { color: { primary: 'blue' } } }, 'layout_customization.color.primary', 'layout_customization.color.primary must match pattern "^#[0-9A-Fa-f]{6}$"'],
      ['an unknown type face', { layout_customization: { type_face: 'Comic Sans' } }, 'layout_customization.type_face', 'layout_customization.type_face must be equal to one of the allowed values: Platform Micro Text, Open Sans, Montserrat, Roboto'],
      ['an ftp redirect URL', { success_url: 'ftp://shop.example/ok' }, 'success_url', 'success_url must match pattern "^https?://"'],
      ['an ftp notification URL', { notification: { ...NOTIFICATION, url: 'ftp://shop.example/hook' } }, 'notification.url', 'notification.url must match pattern "^https?://"'],
      ['a user with a colon', { notification: { ...NOTIFICATION, user_credentials: { user: 'a:b', password: 'p' } } }, 'notification.user_credentials.user', 'notification.user_credentials.user must match pattern "^[^:]+$"'],
    ])('answers %s with validation_error', async (_name, body, field, message) => {
      await unchanged('first', () => patch('first', body), validationError([{ field, message }]));
    });

    it('answers a new notification URL without the password: the stored one never goes to an address it was not given with', async () => {
      const moved = { notification: { url: 'https://collector.example/hook' } };
      await unchanged('first', () => patch('first', moved), validationError([
        { field: 'notification.user_credentials.password', message: 'is required when notification.url changes: the stored password is never sent to a new address' },
      ]));
      // The same URL again, or the user alone, needs no password; a new URL with its password is taken.
      expect((await patch('first', { notification: { url: NOTIFICATION.url } })).status).toBe(200);
      const withPassword = await patch('first', { notification: { url: 'https://collector.example/hook', user_credentials: { password: 'an0ther-Pass' } } });
      expect(withPassword.status).toBe(200);
      expect(await storedOf('first')).toMatchObject({ notificationUrl: 'https://collector.example/hook', notificationPassword: 'an0ther-Pass' });
      expect((await patch('first', { notification: { ...NOTIFICATION, user_credentials: { ...NOTIFICATION.user_credentials, password: 'n0va-S3nha-Abr2026' } } })).status).toBe(200);
    });

    it('answers a first notification without credentials, one detail per missing part', async () => {
      await unchanged('second', () => patch('second', { notification: { url: NOTIFICATION.url } }), validationError([
        { field: 'notification.user_credentials.user', message: 'is required when notification.url is set' },
        { field: 'notification.user_credentials.password', message: 'is required when notification.url is set' },
      ]));
      await unchanged('second', () => patch('second', { notification: { user_credentials: { user: 'u', password: 'p' } } }), validationError([
        { field: 'notification.url', message: 'is required when notification is set' },
      ]));
      expect(await storedOf('second')).toMatchObject({ notificationUrl: null, notificationUser: null, notificationPassword: null });
    });

    it('answers credentials inside the notification URL', async () => {
      await unchanged('first', () => patch('first', { notification: { url: 'https://user:pass@shop.example/hook' } }), validationError([
        { field: 'notification.url', message: 'must not contain credentials (user:password@); use notification.user_credentials' },
        { field: 'notification.user_credentials.password', message: 'is required when notification.url changes: the stored password is never sent to a new address' },
      ]));
    });

    it.each([
      'http://127.0.0.1/hook',
      'http://[::1]/hook',
      'http://localhost:3000/hook',
      'http://10.0.0.8/hook',
      'http://169.254.169.254/latest',
      'http://2130706433/hook',
      'http://0x7f.0.0.1/hook',
      'http://0/hook',
      'http://[::]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::ffff:7f00:1]/hook',
    ])('answers the private address %s when the sandbox does not allow them', async (url) => {
      await unchanged('strict', () => patch('strict', { notification: { ...NOTIFICATION, url } }, strictServer), validationError([
        { field: 'notification.url', message: 'must not point to a loopback, private, link-local or reserved address' },
      ]));
      expect(await storedOf('strict')).toBeUndefined();
    });

    it.each([
      ['merchant.example', 'loopback'],
      ['MERCHANT.example.', 'loopback, in capitals with the root dot'],
      ['metadata.example', 'link-local (cloud metadata)'],
      ['mapped.example', 'IPv4-mapped loopback'],
      ['mixed.example', 'a public address and a private one'],
      ['intranet.example', 'IPv6 unique local'],
      ['nowhere.example', 'nothing: the name does not resolve'],
    ])('answers the host name %s (it resolves to %s) when the sandbox does not allow private addresses', async (name) => {
      await unchanged('strict', () => patch('strict', { notification: { ...NOTIFICATION, url: `https://${name}/hook` } }, strictServer), validationError([
        { field: 'notification.url', message: 'must have a host name that resolves to public addresses only' },
      ]));
      expect(await storedOf('strict')).toBeUndefined();
    });

    describe('redirect URLs a browser cannot follow', () => {
      it.each(['http://', 'https://', 'http://:80/', 'http://%zz/', 'http://[::1/'])('answers %s as success_url and as error_url', async (url) => {
        const message = 'must be an absolute http or https URL';
        await unchanged('first', () => patch('first', { success_url: url }), validationError([{ field: 'success_url', message }]));
        await unchanged('first', () => patch('first', { error_url: url }), validationError([{ field: 'error_url', message }]));
        await unchanged('first', () => patch('first', { success_url: url, error_url: url, layout_customization: { type_face: 'Roboto' } }), validationError([
          { field: 'success_url', message },
          { field: 'error_url', message },
        ]));
        expect(await storedOf('first')).toMatchObject({ successUrl: 'https://shop.example/ok2', errorUrl: 'https://shop.example/error', typeFace: 'Montserrat' });
      });
    });

    it('accepts a public notification URL on the strict instance', async () => {
      const res = await patch('strict', { notification: NOTIFICATION }, strictServer);
      expect(res.status).toBe(200);
      expect(await storedOf('strict')).toMatchObject({ notificationUrl: NOTIFICATION.url });
    });
  });
});
