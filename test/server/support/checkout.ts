// Helpers of the hosted checkout suites: a merchant on 127.0.0.1 (notification receiver and the
// success/error pages), a seller configured to use it, payment intents, and the card form.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestServer } from './server.ts';
import { contractExample } from './web-checkout.ts';

export const WC = '/dpy/web-checkout/v1';
export const MERCHANT_CREDENTIALS = { user: 'loja-webhook', password: 'webhook-secret-2026' };

export interface Merchant {
  url: string;
  notifications: Array<{ headers: IncomingHttpHeaders; body: string; path: string }>;
  pages: string[];
  close(): Promise<void>;
}

/** A merchant: `POST /` answers the given statuses in order (then 200); GET serves its success/error pages. */
export async function startMerchant(answers: number[] = []): Promise<Merchant> {
  const notifications: Merchant['notifications'] = [];
  const pages: string[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      notifications.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' });
      res.writeHead(answers.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    pages.push(req.url ?? '');
    const kind = req.url?.startsWith('/success') ? 'Thank you for your order' : 'Your payment did not go through';
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Merchant</title><h1 id="merchant">${kind}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    notifications,
    pages,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Success, error and notification URLs of the merchant, with a layout. */
export async function configureCheckout(server: TestServer, token: string, merchant: Pick<Merchant, 'url'> | undefined, layout = true) {
  const body: Record<string, unknown> = {};
  if (layout) body.layout_customization = { color: { primary: '#6A1B9A', accent: '#FFB300' }, type_face: 'Roboto' };
  if (merchant) {
    Object.assign(body, {
      success_url: `${merchant.url}/success`,
      error_url: `${merchant.url}/error`,
      notification: { url: `${merchant.url}/`, user_credentials: MERCHANT_CREDENTIALS },
    });
  }
  const res = await server.http.patch(`${WC}/technical-configurations`).set('Authorization', `Bearer ${token}`).send(body);
  if (res.status !== 200) throw new Error(`configuration answered ${res.status}: ${JSON.stringify(res.body)}`);
}

/** A payment intent from the contract's example (`PaymentIntentRequestStandard` by default). */
export async function createIntent(server: TestServer, token: string, change: (body: any) => void = () => {}, example = 'PaymentIntentRequestStandard') {
  const body = contractExample(example);
  change(body);
  const res = await server.http.post(`${WC}/payment-intent`).set('Authorization', `Bearer ${token}`).send(body);
  if (res.status !== 201) throw new Error(`payment intent answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { ...(res.body as { payment_intent_id: string; redirect_url: string; trade_name: string }), request: body };
}

export const APPROVED = '4111111111111111';
export const DENIED = '4000000000000002';
export const THREEDS_DENIED = '4000000000003063';

/** The card form of the hosted page. */
export const cardForm = (number = APPROVED, extra: Record<string, string> = {}) => ({
  method: 'credit',
  card_number: number,
  cardholder_name: 'MARIA SILVA',
  expiry: '12/30',
  security_code: '123',
  installments: '1',
  time_page: '12',
  timezone: 'America/Sao_Paulo',
  locale: 'pt-BR',
  ...extra,
});

/** A link buyer's details (valid CPF), billing address and, with `delivery`, a delivery address. */
export const buyerForm = (extra: Record<string, string> = {}) => ({
  first_name: 'Ana',
  last_name: 'Costa',
  email: 'ana.costa@example.com',
  document_type: 'CPF',
  document_number: '111.444.777-35',
  street: 'Avenida Afonso Pena',
  number: '1500',
  city: 'Belo Horizonte',
  state: 'MG',
  postal_code: '30130-005',
  ...extra,
});

export const deliveryForm = { delivery_street: 'Rua da Bahia', delivery_number: '200', delivery_city: 'Belo Horizonte', delivery_postal_code: '30160011' };

/** Every row of every table of the store, as text (to prove what is never stored). */
export async function databaseDump(server: TestServer): Promise<string> {
  const { rows } = await server.store.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  const parts: string[] = [];
  for (const { table_name } of rows) {
    const dump = await server.store.query(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`);
    parts.push(...dump.rows.map((r: any) => `${table_name} ${r.row}`));
  }
  return parts.join('\n');
}
