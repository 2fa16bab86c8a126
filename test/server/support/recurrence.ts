// Helpers of the subscription, plan and subscription webhook suites: a server on the joined bundle,
// on PGlite or (when DATABASE_URL is set) on a fresh PostgreSQL schema; sellers inserted directly
// (a second BR seller, an AR seller, one without Recurrence), tokens, plans and subscriptions.
import { expect } from 'vitest';
import { DEMO_SELLER } from '../../../server/sandbox/demo-seller.ts';

export { STORES } from './stores.ts';
import { ADMIN, expectNoStackTrace, type TestServer } from './server.ts';
import { insertSeller, tokenOf } from './sellers.ts';

export const SUBSCRIPTIONS = '/rpy/be-subscription/v1/subscriptions';
export const PLANS = '/rpy/be-plan/v1/plans';
export const EVENTS = '/dpm/webhooks/v1/subscriptions/payment/events';



export interface TestSeller {
  sellerId: string;
  clientId: string;
  country: string;
  auth: { Authorization: string };
}

/** A seller of the recurrence suites (insertSeller with the demo seller's payment methods) and its token. */
export async function addSeller(server: TestServer, options: { country?: string; recurrence?: boolean; currency?: string } = {}): Promise<TestSeller> {
  const { country = 'BR', recurrence = true, currency = 'BRL' } = options;
  const seller = await insertSeller(server.store, { country, recurrence, currencies: [currency], tradeName: 'Loja Teste', email: 'loja@example.com', payments: DEMO_SELLER.payments });
  const token = await tokenOf(server, seller);
  return { sellerId: seller.sellerId, clientId: seller.clientId, country, auth: { Authorization: `Bearer ${token}` } };
}

export function planBody(seller: TestSeller, overrides: Record<string, unknown> = {}) {
  return {
    seller_id: seller.sellerId,
    name: 'Clube do Café Mensal',
    description: 'Um pacote de café por mês',
    amount: 8990,
    currency: 'BRL',
    payment_types: 'credit_card',
    sales_tax: 1079,
    product_type: 'physical_goods',
    period: { type: 'monthly', billing_cycle: 12 },
    ...overrides,
  };
}

/** Creates a plan through POST /sandbox/v1/plans; answers its body. */
export async function createPlan(server: TestServer, seller: TestSeller, overrides: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await server.http.post('/sandbox/v1/plans').set('Authorization', ADMIN).send(planBody(seller, overrides));
  if (res.status !== 201) throw new Error(`plan creation answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export function card(overrides: Record<string, unknown> = {}) {
  return {
    brand: 'Visa',
    number_token: 'tok_sandbox_approved',
    bin: '411111',
    last_four_digits: '1111',
    expiration_month: '08',
    expiration_year: '29',
    cardholder_name: 'MARIA SOUZA',
    security_code: '123',
    ...overrides,
  };
}

export function subscriptionBody(seller: TestSeller, plan: Record<string, any>, overrides: Record<string, unknown> = {}, cardOverrides: Record<string, unknown> = {}) {
  return {
    seller_id: seller.sellerId,
    customer_id: '52998224725',
    plan_id: plan.plan_id,
    order_id: 'PED-2026-000123',
    subscription: {
      payment_type: { credit: { transaction_type: 'FULL', number_installments: 1, soft_descriptor: 'CAFEMONTANHA', card: card(cardOverrides) } },
      shippings: [{ first_name: 'Maria', last_name: 'Souza', shipping_amount: 1500, address: { city: 'São Paulo', country: 'BR' } }],
    },
    device: { ip_address: '200.158.34.12', device_id: 'dev-1' },
    ...overrides,
  };
}

/** Creates a subscription and expects a 201; answers its body. */
export async function subscribe(server: TestServer, seller: TestSeller, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await server.http.post(SUBSCRIPTIONS).set(seller.auth).send(body);
  if (res.status !== 201) throw new Error(`subscription creation answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** An error answer: status, JSON, exact body, no stack trace. */
export function expectError(res: { status: number; body: unknown; headers: Record<string, string> }, status: number, body: unknown): void {
  expect({ status: res.status, body: res.body }).toEqual({ status, body });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expectNoStackTrace(res.body);
}

/** A UTC calendar date `days` from today. */
export function dateFromToday(days: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + days)).toISOString().slice(0, 10);
}

export const today = () => dateFromToday(0);

/** Audit rows of an object. */
export async function auditOf(server: TestServer, objectId: string) {
  const { rows } = await server.store.query<{ actor: string; client_id: string; action: string }>(
    'SELECT actor, client_id, action FROM recurrence_audit WHERE object_id = $1 ORDER BY audit_id',
    [objectId],
  );
  return rows;
}

/** No log line carries a card token, a security code or a full card number. */
export function expectNoCardDataInLogs(server: TestServer, secrets: string[]): void {
  for (const secret of secrets) expect(server.logs.text).not.toContain(secret);
}
