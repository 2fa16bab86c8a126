// The objects the contract fuzzer works on, created through the API as a client would (the sandbox
// admin area, the seller's own calls, the hosted link page for an order): two sellers, their
// configuration, links, an order, plans, subscriptions, a payment event, test clocks, notification
// deliveries. From them, per operation, a valid request that reaches its 2xx, and the real values
// (by parameter or field name) that fuzzed requests mix in.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { exampleRequest } from '../support/examples.ts';
import type { OpenApiDocument, Operation } from '../support/contract.ts';
import { buyerForm, cardForm } from '../server/support/checkout.ts';
import { PNG, product } from '../server/support/payment-link.ts';
import { planBody, subscriptionBody, type TestSeller } from '../server/support/recurrence.ts';
import { basic, GATEWAY_SCOPE, tokenForm, ADMIN } from '../server/support/server.ts';

/** Parts of a request that differ from the operation's example. */
export interface Scenario {
  path?: Record<string, string>;
  query?: Record<string, string>;
  /** The whole body (JSON value, form fields); the example's when absent. */
  body?: unknown;
  /** The Authorization header, when not the operation's usual one. */
  auth?: string;
}

interface Client {
  sellerId: string;
  clientId: string;
  clientSecret: string;
  token: string;
}

export interface World {
  /** The seller whose token the oauth2 operations carry. */
  seller: Client;
  /** Another seller: its objects are another's (404), its client is the one wrong secrets are tried on. */
  other: Client;
  admin: string;
  /** Per operationId: valid requests, each reaching the operation's 2xx. */
  valid: Record<string, fc.Arbitrary<Scenario>>;
  /** Per operationId: well-formed requests a rule refuses with a documented 4xx the others rarely reach. */
  refusals: Record<string, fc.Arbitrary<Scenario>>;
  /** Real values by parameter or field name, to mix into fuzzed requests. */
  real: Record<string, string[]>;
}

/** Names that carry the same kind of id under another name. */
export const SAME_AS: Record<string, string> = { subscriptionId: 'subscription_id', event_id: 'subscription_id' };

/** A call during set-up, which must answer `expected`. */
async function call(baseUrl: string, method: string, path: string, options: { auth?: string; json?: unknown; form?: Record<string, string> }, expected: number): Promise<any> {
  const headers: Record<string, string> = options.auth ? { authorization: options.auth } : {};
  let body: string | undefined;
  if (options.json !== undefined) [headers['content-type'], body] = ['application/json', JSON.stringify(options.json)];
  if (options.form) [headers['content-type'], body] = ['application/x-www-form-urlencoded', new URLSearchParams(options.form).toString()];
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  if (res.status !== expected) throw new Error(`fuzz set-up: ${method} ${path} answered ${res.status}, not ${expected}: ${text.slice(0, 300)}`);
  return /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text;
}

async function newClient(baseUrl: string, name: string, options: Record<string, unknown> = {}): Promise<Client> {
  const [clientId, clientSecret] = [`fuzz-${name}-${randomUUID().slice(0, 8)}`, `secret-${randomUUID()}`];
  const body = { trade_name: `Fuzz ${name}`, email: 'fuzz@example.com', country: 'BR', currencies: ['BRL'], client_id: clientId, client_secret: clientSecret, ...options };
  const created = await call(baseUrl, 'POST', '/sandbox/v1/sellers', { auth: ADMIN, json: body }, 201);
  const form = tokenForm({ client_id: clientId, client_secret: clientSecret });
  const { access_token } = await call(baseUrl, 'POST', '/authentication/oauth2/-core/access_token', { form }, 200);
  return { sellerId: created.seller.seller_id, clientId, clientSecret, token: access_token };
}

export async function buildWorld(baseUrl: string, doc: OpenApiDocument, operations: Operation[]): Promise<World> {
  const [seller, other] = [await newClient(baseUrl, 'seller'), await newClient(baseUrl, 'other')];
  // A seller without the checkout service and without Recurrence: the 403s.
  const restricted = await newClient(baseUrl, 'restricted', { services: { payment_link: true }, recurrence_enabled: false });
  const bearer = (c: Client) => `Bearer ${c.token}`;
  const admin = (method: string, path: string, json: unknown, expected = 201) => call(baseUrl, method, path, { auth: ADMIN, json }, expected);
  const own = (c: Client, method: string, path: string, json: unknown, expected = 201) => call(baseUrl, method, path, { auth: bearer(c), json }, expected);

  // Where the seller's notifications would go (nothing listens: deliveries stay in the log).
  await own(seller, 'PATCH', '/dpy/web-checkout/v1/technical-configurations', {
    success_url: 'https://shop.example/ok',
    error_url: 'https://shop.example/error',
    notification: { url: 'http://127.0.0.1:9/fuzz-notifications', user_credentials: { user: 'fuzz', password: 'fuzz-password' } },
  }, 200);
  const link = await admin('POST', '/sandbox/v1/payment-links', { seller_id: seller.sellerId, label: 'Fuzz link', type: 'custom', products: [product()] });
  const otherLink = await admin('POST', '/sandbox/v1/payment-links', { seller_id: other.sellerId, label: 'Other link', type: 'custom', products: [product()] });
  const page: string = await call(baseUrl, 'POST', `/pay/${link.short_id}`, { form: { ...buyerForm(), ...cardForm() } }, 200); // fetch follows the 303 to the result page
  const orderId = /order ([0-9a-f-]{36})/.exec(page)?.[1];
  if (!orderId) throw new Error('fuzz set-up: the link page named no order');

  const asSeller = (c: Client) => ({ sellerId: c.sellerId }) as TestSeller;
  const [plan, flippedPlan, otherPlan, debitPlan] = [
    await admin('POST', '/sandbox/v1/plans', planBody(asSeller(seller))),
    await admin('POST', '/sandbox/v1/plans', planBody(asSeller(seller), { name: 'Status changes' })),
    await admin('POST', '/sandbox/v1/plans', planBody(asSeller(other))),
    await admin('POST', '/sandbox/v1/plans', planBody(asSeller(seller), { payment_types: 'debit_card', status: 'inactive' })),
  ];
  const subscribe = async (c: Client, p: { plan_id: string }, numberToken = 'tok_sandbox_approved') => {
    const body = subscriptionBody(asSeller(c), p, { customer_id: `fuzz-${randomUUID().slice(0, 8)}` }, { number_token: numberToken });
    return { subscription_id: (await own(c, 'POST', '/rpy/be-subscription/v1/subscriptions', body)).subscription.subscription_id as string };
  };
  const kept = await subscribe(seller, plan); // never canceled: read and changed by the fuzzer
  const pending = await subscribe(seller, plan, 'tok_sandbox_pending');
  const cancelable = [await subscribe(seller, plan), await subscribe(seller, plan), await subscribe(seller, plan)];
  const otherSubscription = await subscribe(other, otherPlan);
  const charges = (id: string) => call(baseUrl, 'GET', `/sandbox/v1/subscriptions/${id}/charges`, { auth: ADMIN }, 200);
  const paymentId: string = (await charges(pending.subscription_id)).installments[0].attempts[0].payment_id;
  const event = { idempotency_key: randomUUID(), payment_id: paymentId, status: 'APPROVED' };
  await own(seller, 'PATCH', `/dpm/webhooks/v1/subscriptions/payment/events/${pending.subscription_id}`, event, 200);
  const third = (await charges(kept.subscription_id)).installments[2];

  // A clock the fuzzer reads and moves, and one only the valid request moves (to the time it has).
  const clockAt = '2030-12-31T23:59:59Z';
  const clockCustomer = `fuzz-${randomUUID()}`;
  const clock = await admin('POST', '/sandbox/v1/test-clocks', { seller_id: seller.sellerId, name: 'Fuzz', frozen_time: '2026-01-05T09:00:00Z', customer_ids: [clockCustomer] });
  const stillClock = await admin('POST', '/sandbox/v1/test-clocks', { seller_id: seller.sellerId, frozen_time: clockAt, customer_ids: [`fuzz-${randomUUID()}`] });
  const { deliveries } = await call(baseUrl, 'GET', `/sandbox/v1/notifications?seller_id=${seller.sellerId}`, { auth: ADMIN }, 200);
  if (!deliveries.length) throw new Error('fuzz set-up: no notification delivery was recorded');
  const deliveryId: string = deliveries[0].delivery_id;

  /** The operation's example body, `changes` merged over it (an `undefined` change drops the field). */
  const example = (id: string, changes: Record<string, unknown> = {}) => {
    const op = operations.find((o) => o.operationId === id);
    const merged: Record<string, unknown> = { ...(op ? (exampleRequest(doc, op).body as object) : {}), ...changes };
    return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined));
  };
  const fresh = fc.uuid().map((u) => `fuzz-${u}`.slice(0, 30));
  const withSeller = (id: string) => example(id, { seller_id: seller.sellerId });
  // No start date: the example's lies in the past of today's runs.
  const subscription = (customer: string) => example('createSubscription', { seller_id: seller.sellerId, plan_id: plan.plan_id, customer_id: customer, installment_start_date: undefined });
  const valid: Record<string, fc.Arbitrary<Scenario>> = {
    issueAccessToken: fc.constant({ body: tokenForm({ client_id: seller.clientId, client_secret: seller.clientSecret }) }),
    getPaymentLinkByShortId: fc.constant({ path: { short_id: link.short_id } }),
    getPaymentLinkOrder: fc.constant({ path: { link_id: link.link_id, order_id: orderId } }),
    createSubscription: fresh.map((customer) => ({ body: subscription(customer) })),
    getSubscription: fc.constant({ path: { subscription_id: kept.subscription_id } }),
    updateFloatingInstallment: fc.constant({ path: { subscriptionId: kept.subscription_id, installment: '3' }, body: { new_amount: 6990, new_scheduled_date: third.scheduled_date } }),
    updatePlanStatus: fc.constantFrom('active', 'inactive').map((status) => ({ path: { plan_id: flippedPlan.plan_id, status } })),
    applySubscriptionEvent: fc.constant({ path: { event_name: 'payment', event_id: pending.subscription_id }, body: event }),
    createSandboxSeller: fc.constant({ body: example('createSandboxSeller', { client_id: undefined, client_secret: undefined }) }),
    listSandboxNotifications: fc.constant({ query: { seller_id: seller.sellerId } }),
    getSandboxNotification: fc.constant({ path: { delivery_id: deliveryId } }),
    redeliverSandboxNotification: fc.constant({ path: { delivery_id: deliveryId } }),
    createSandboxPlan: fc.constant({ body: withSeller('createSandboxPlan') }),
    createSandboxTestClock: fresh.map((customer) => ({ body: example('createSandboxTestClock', { seller_id: seller.sellerId, customer_ids: [customer] }) })),
    getSandboxTestClock: fc.constant({ path: { test_clock_id: clock.test_clock_id } }),
    advanceSandboxTestClock: fc.constant({ path: { test_clock_id: stillClock.test_clock_id }, body: { frozen_time: clockAt } }),
    cancelSandboxSubscription: fc.constantFrom(...cancelable).map((s) => ({ path: { subscription_id: s.subscription_id } })),
    listSandboxSubscriptionCharges: fc.constant({ path: { subscription_id: kept.subscription_id } }),
    createSandboxPaymentLink: fc.constant({ body: withSeller('createSandboxPaymentLink') }),
  };
  const wrongSecret = fc.uuid().map((u) => `wrong-${u}`);
  const refusals: Record<string, fc.Arbitrary<Scenario>> = {
    // Wrong secrets for the other seller's client: 401 until the throttle answers 429.
    issueAccessToken: wrongSecret.map((secret) => ({ body: tokenForm({ client_id: other.clientId, client_secret: secret }) })),
    issueAccessTokenWithBasicAuth: wrongSecret.map((secret) => ({ auth: basic(other.clientId, secret) })),
    createPaymentIntent: fc.constant({ auth: bearer(restricted) }),
    uploadProductImage: fc.constant({ body: imageForm(5 * 1024 * 1024 + 1) }),
    createSubscription: fc.constant({ auth: bearer(restricted), body: { ...subscription('fuzz-refused'), seller_id: restricted.sellerId } }),
    updateFloatingInstallment: fc.constant({ auth: bearer(restricted), path: { subscriptionId: kept.subscription_id, installment: '3' } }),
    updatePlanStatus: fc.constant({ path: { plan_id: debitPlan.plan_id, status: 'active' } }),
    applySubscriptionEvent: fc.oneof(
      fc.constant({ path: { event_name: 'payment', event_id: pending.subscription_id }, body: { ...event, status: 'DENIED' } }),
      fc.uuid().map((key) => ({ path: { event_name: 'payment', event_id: pending.subscription_id }, body: { ...event, idempotency_key: key, status: 'AUTHORIZED' } })),
    ),
    createSandboxSeller: fc.constantFrom(
      { body: example('createSandboxSeller', { client_id: seller.clientId }) },
      { body: example('createSandboxSeller', { client_id: undefined, business_configuration: { currency: 'USD' } }) },
    ),
    createSandboxTestClock: fc.constant({ body: example('createSandboxTestClock', { seller_id: seller.sellerId, customer_ids: [clockCustomer] }) }),
  };
  const real: Record<string, string[]> = {
    seller_id: [seller.sellerId, other.sellerId],
    client_id: [other.clientId],
    short_id: [link.short_id, otherLink.short_id],
    link_id: [link.link_id, otherLink.link_id],
    order_id: [orderId],
    plan_id: [flippedPlan.plan_id, otherPlan.plan_id],
    // `kept` is left out: a fuzzed cancel of it would leave its readers and changers nothing to reach.
    subscription_id: [pending.subscription_id, ...cancelable.map((s) => s.subscription_id), otherSubscription.subscription_id],
    payment_id: [paymentId],
    idempotency_key: [event.idempotency_key],
    test_clock_id: [clock.test_clock_id],
    delivery_id: [deliveryId, ...deliveries.slice(1, 3).map((d: any) => d.delivery_id)],
    installment: ['1', '3', '12', '13'],
  };
  return { seller, other, admin: ADMIN, valid, refusals, real };
}

/** An upload form with a PNG of `size` bytes (the contract's limit is 5 MiB). */
function imageForm(size: number): FormData {
  const png = Buffer.alloc(size, 7);
  PNG.copy(png);
  const form = new FormData();
  form.set('image', new Blob([png], { type: 'image/png' }), 'large.png');
  return form;
}

/** The credentials of a seller client as the two token forms take them. */
export const clientCredentials = (c: Client) => ({
  basic: basic(c.clientId, c.clientSecret),
  tokenForm: tokenForm({ client_id: c.clientId, client_secret: c.clientSecret, scope: GATEWAY_SCOPE }),
});
