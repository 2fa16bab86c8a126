// The ready Express receiver of the checkout notification: 200 only once the merchant's handler has
// resolved (a 200 ends the platform's delivery), 500 when it throws (so the platform retries), 401
// for wrong credentials (the handler never runs), 400 for a payload that breaks the contract.
import express from 'express';
import { connect, createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { checkoutNotificationReceiver, type CheckoutNotification } from '../../client/index.ts';
import { examplesOf, loadPlatform } from '../support/contract.ts';

const doc = loadPlatform();
const media = doc.webhooks!['checkout-notification']!.post.requestBody.content['application/json'];
const notification = (examplesOf(doc, media) as Array<[string, CheckoutNotification]>)[0]![1];
const credentials = { user: 'loja-aurora', password: 'n0tif1cation-pass' };

function merchantApp(onNotification: (n: CheckoutNotification) => Promise<void>, options: { jsonParserFirst?: boolean } = {}) {
  const app = express();
  if (options.jsonParserFirst) app.use(express.json());
  const onError = vi.fn();
  app.post('/', checkoutNotificationReceiver({ credentials, onNotification, onError }));
  return { app, onError };
}

const deliver = (app: express.Express, body: unknown = notification, user = credentials.user, password = credentials.password) =>
  request(app).post('/').auth(user, password).set('content-type', 'application/json').send(JSON.stringify(body));

describe('checkoutNotificationReceiver', () => {
  it('answers 200 only after the handler has resolved', async () => {
    let finish!: () => void;
    const events: string[] = [];
    const { app } = merchantApp(async (n) => {
      events.push(`handling ${n.checkout_id}`);
      await new Promise<void>((resolve) => (finish = resolve));
      events.push('handled');
    });
    const answered = deliver(app).then((res) => {
      events.push(`answered ${res.status}`);
      return res;
    });
    await vi.waitFor(() => expect(events).toEqual([`handling ${notification.checkout_id}`]));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events).toHaveLength(1);
    finish();
    expect((await answered).status).toBe(200);
    expect(events).toEqual([`handling ${notification.checkout_id}`, 'handled', 'answered 200']);
  });

  it('answers 500 when the handler throws, so the platform retries', async () => {
    const { app, onError } = merchantApp(async () => {
      throw new Error('database down');
    });
    const res = await deliver(app);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'handler_failed' });
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'database down' }), notification);
  });

  it('answers 500 to everyone when the configured user or password is empty (an unset environment variable), never 200', async () => {
    for (const configured of [{ user: '', password: '' }, { user: 'loja', password: '' }, { user: '', password: 'x' }]) {
      const handler = vi.fn(async () => {});
      const app = express();
      app.post('/', checkoutNotificationReceiver({ credentials: configured, onNotification: handler }));
      const res = await deliver(app, notification, configured.user, configured.password);
      expect(res.status).toBe(500); // Express's error handler: the receiver passed the TypeError on
      expect(res.text).toContain('TypeError: the notification credentials need a non-empty user and password');
      expect(handler).not.toHaveBeenCalled();
    }
  });

  it('answers 401 to wrong or missing credentials, without calling the handler', async () => {
    const handler = vi.fn(async () => {});
    const { app } = merchantApp(handler);
    expect((await deliver(app, notification, credentials.user, 'wrong')).status).toBe(401);
    expect((await deliver(app, notification, 'wrong', credentials.password)).status).toBe(401);
    const missing = await request(app).post('/').set('content-type', 'application/json').send(JSON.stringify(notification));
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toMatch(/^Basic /);
    expect(handler).not.toHaveBeenCalled();
  });

  it('answers 400 to a payload that breaks the contract, naming the field', async () => {
    const handler = vi.fn(async () => {});
    const { app } = merchantApp(handler);
    const res = await deliver(app, { ...notification, mode: 'bogus' });
    expect(res.status).toBe(400);
    expect(res.body.problems).toContainEqual(expect.objectContaining({ field: 'mode' }));
    expect(handler).not.toHaveBeenCalled();
  });

  it('works behind express.json() as well', async () => {
    const received: CheckoutNotification[] = [];
    const { app } = merchantApp(async (n) => void received.push(n), { jsonParserFirst: true });
    expect((await deliver(app)).status).toBe(200);
    expect(received).toEqual([notification]);
  });
});

describe('checkoutNotificationReceiver on node:http2', () => {
  it('mounts on an HTTP/2 server as it is (its request and response types fit), answering 200 and 401', async () => {
    const received: CheckoutNotification[] = [];
    const server = createHttp2Server(checkoutNotificationReceiver({ credentials, onNotification: (n) => void received.push(n) }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const post = (password: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const basic = Buffer.from(`${credentials.user}:${password}`).toString('base64');
        const stream = session.request({ ':method': 'POST', ':path': '/', authorization: `Basic ${basic}`, 'content-type': 'application/json' });
        let status = 0;
        let body = '';
        stream.on('response', (headers) => (status = Number(headers[':status'])));
        stream.on('data', (chunk) => (body += chunk));
        stream.on('end', () => resolve({ status, body }));
        stream.on('error', reject);
        stream.end(JSON.stringify(notification));
      });
    try {
      expect(await post(credentials.password)).toEqual({ status: 200, body: '' });
      expect(received).toEqual([notification]);
      expect(await post('wrong')).toEqual({ status: 401, body: JSON.stringify({ error: 'invalid_credentials' }) });
    } finally {
      session.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
