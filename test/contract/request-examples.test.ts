// Every request example of the contract, sent to a fresh reference server (the joined bundle, with
// request and response validation on), answers its documented status: the status a response
// example of the same name is documented under, else the operation's success status. Examples that
// point at things (a plan, a subscription, a link, an order, a delivery, a test clock, a payment)
// get the ids of fixtures made first, through the API itself; everything else is the example as
// written, so an example that expires (a start date now in the past) fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deref, examplesOf, loadPlatform, operationsOf, type Operation } from '../support/contract.ts';
import { callerCredentialHeaders, exampleRequest, securityKinds } from '../support/examples.ts';
import { cardForm, buyerForm } from '../server/support/checkout.ts';
import { startTestServer, tokenForm, DEMO, type TestServer } from '../server/support/server.ts';

const PLATFORM_JSON = new URL('../../generated/platform.openapi.json', import.meta.url).pathname;
const doc = loadPlatform();

/** What an example is expected to answer: the status its namesake response example sits under, else the lowest 2xx. */
function expectedStatus(op: Operation, exampleName: string | undefined): number {
  const responses = Object.entries<any>(op.operation.responses);
  if (exampleName) {
    for (const [status, response] of responses) {
      for (const media of Object.values<any>(deref(doc, response).content ?? {})) {
        if (exampleName in (media.examples ?? {}) && /^\d{3}$/.test(status)) return Number(status);
      }
    }
  }
  return Number(responses.map(([s]) => s).filter((s) => /^2\d\d$/.test(s)).sort()[0]);
}

interface Case {
  op: Operation;
  name: string | undefined;
  body: unknown;
}

/** Every operation with each of its request body examples (one case without a body when it has none). */
function cases(): Case[] {
  return operationsOf(doc).flatMap((op) => {
    const content = deref(doc, op.operation.requestBody ?? {}).content ?? {};
    const [mediaType, media] = Object.entries<any>(content)[0] ?? [];
    if (!mediaType || mediaType === 'multipart/form-data') return [{ op, name: undefined, body: undefined } as Case];
    return examplesOf(doc, media).map(([name, value]): Case => ({ op, name, body: value }));
  });
}

// Operations that consume what others make run after them (a cancel last, a key rotation last).
const LAST = ['cancelSandboxSubscription', 'rotateSandboxSigningKey', 'updatePlanStatus'];
const ordered = () => {
  const all = cases();
  return [...all.filter((c) => !LAST.includes(c.op.operationId)), ...LAST.flatMap((id) => all.filter((c) => c.op.operationId === id))];
};

describe('every request example of the contract answers its documented status on a fresh server', () => {
  let server: TestServer;
  let bearer: string;
  const ids: Record<string, string> = {};
  /** Tokens of other sellers, by the name of the example that needs one. */
  const bearers: Record<string, string> = {};
  /** Payment ids of pending subscription charges, one per webhook example (each moves its own payment). */
  const pendingPayments: Array<{ subscriptionId: string; paymentId: string }> = [];

  const api = (method: string, url: string) => (server.http as any)[method](url).set('Authorization', bearer);
  const admin = (method: string, url: string) => (server.http as any)[method](url).set('Authorization', `Bearer ${server.config.sandboxAdminToken}`);
  const ok = (res: any, what: string) => {
    if (res.status >= 300 && res.status !== 303) throw new Error(`fixture ${what} answered ${res.status}: ${res.text}`);
    return res;
  };

  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_JSON } });
    const token = ok(await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm()), 'token');
    bearer = `Bearer ${token.body.access_token}`;
    // A plan and a subscription on it (the scheduled example's plan), with installment 3 to move.
    const planExample = examplesOf(doc, deref(doc, operationsOf(doc).find((o) => o.operationId === 'createSandboxPlan')!.operation.requestBody).content['application/json'])[0]![1];
    const plan = ok(await admin('post', '/sandbox/v1/plans').send(planExample), 'plan');
    ids.plan_id = plan.body.plan_id;
    const subscriptionExample = examplesOf(doc, deref(doc, operationsOf(doc).find((o) => o.operationId === 'createSubscription')!.operation.requestBody).content['application/json'])[0]![1] as any;
    const subscription = ok(await api('post', '/rpy/be-subscription/v1/subscriptions').send({ ...subscriptionExample, plan_id: ids.plan_id }), 'subscription');
    ids.subscription_id = ids.subscriptionId = subscription.body.subscription.subscription_id;
    // Pending charges for the subscription webhook's examples (approved and refunded move the same payment).
    for (let i = 0; i < 2; i++) {
      const body = structuredClone(subscriptionExample);
      delete body.installment_start_date;
      body.subscription.payment_type.credit.card = { ...(body.subscription.payment_type.credit.card ?? {}) };
      const created = ok(await api('post', '/rpy/be-subscription/v1/subscriptions').send(withPendingToken(body, ids.plan_id!)), 'pending subscription');
      pendingPayments.push({ subscriptionId: created.body.subscription.subscription_id, paymentId: created.body.payment.payment_id });
    }
    // A payment link with an order, paid through its page; the notification makes a delivery.
    ok(await api('patch', '/dpy/web-checkout/v1/technical-configurations').send({ notification: { url: 'http://127.0.0.1:9/', user_credentials: { user: 'u', password: 'p' } } }), 'notification url');
    const linkExample = examplesOf(doc, deref(doc, operationsOf(doc).find((o) => o.operationId === 'createSandboxPaymentLink')!.operation.requestBody).content['application/json'])[0]![1];
    const link = ok(await admin('post', '/sandbox/v1/payment-links').send(linkExample), 'payment link');
    ids.link_id = link.body.link_id;
    ids.short_id = link.body.short_id;
    const bought = await server.http.post(`/pay/${ids.short_id}`).type('form').send({ ...buyerForm(), ...cardForm() }).redirects(1);
    ids.order_id = /order ([0-9a-f-]{36})/.exec(bought.text)?.[1] ?? '';
    for (let i = 0; i < 50 && !ids.delivery_id; i++) {
      const deliveries = await admin('get', `/sandbox/v1/notifications?seller_id=${DEMO_SELLER}`);
      ids.delivery_id = deliveries.body?.deliveries?.[0]?.delivery_id ?? deliveries.body?.[0]?.delivery_id;
      if (!ids.delivery_id) await new Promise((r) => setTimeout(r, 100));
    }
    const clockExample = examplesOf(doc, deref(doc, operationsOf(doc).find((o) => o.operationId === 'createSandboxTestClock')!.operation.requestBody).content['application/json'])[0]![1];
    // The fixture clock takes another customer: the example's own customer is the example's to attach.
    const clock = ok(await admin('post', '/sandbox/v1/test-clocks').send({ ...(clockExample as object), customer_ids: ['11144477735'] }), 'test clock');
    ids.test_clock_id = clock.body.test_clock_id;
    // A Uruguayan seller for the Uruguayan payment intent (a BR seller refuses a CI document).
    const uy = { client_id: 'examples-uy-seller', client_secret: 'examples-uy-secret-2036' };
    ok(await admin('post', '/sandbox/v1/sellers').send({ trade_name: 'Tienda Aurora', email: 'ventas@tiendaaurora.com.uy', country: 'UY', currencies: ['UYU'], ...uy }), 'UY seller');
    const uyToken = ok(await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm(uy)), 'UY token');
    bearers.uruguay = `Bearer ${uyToken.body.access_token}`;
  }, 60_000);
  afterAll(() => server?.close());

  it.each(ordered().map((c) => [`${c.op.operationId}${c.name ? ` ${c.name}` : ''}`, c] as const))('%s', async (_label, { op, name, body }) => {
    const parts = exampleRequest(doc, op);
    const path = { ...parts.path };
    for (const key of Object.keys(path)) if (ids[key]) path[key] = ids[key]!;
    let sent: any = body === undefined ? undefined : structuredClone(body);
    if (op.operationId === 'createSubscription') sent = { ...sent, plan_id: ids.plan_id };
    if (op.operationId === 'applySubscriptionEvent') {
      const payment = name === 'denied' ? pendingPayments[1]! : pendingPayments[0]!;
      path.event_id = payment.subscriptionId;
      sent = { ...sent, payment_id: payment.paymentId };
    }
    if (op.operationId === 'createSandboxSeller') sent = { ...(sent as object), client_id: `${sent.client_id}-${Date.now()}` };
    const url = op.path.replace(/\{(\w+)\}/g, (_m, key: string) => encodeURIComponent(path[key]!));
    let call = (server.http as any)[op.method](url).query(parts.query).set(parts.header);
    const kinds = securityKinds(doc, op);
    if (kinds.includes('oauth2')) call = call.set('Authorization', (name && bearers[name]) || bearer);
    else if (kinds.includes('http:bearer')) call = call.set('Authorization', `Bearer ${server.config.sandboxAdminToken}`);
    else if (kinds.includes('http:basic')) call = call.auth(DEMO.clientId, DEMO.clientSecret);
    else call = call.set(callerCredentialHeaders(doc, op));
    if (parts.mediaType === 'multipart/form-data') call = call.attach('image', PNG, { filename: 'product.png', contentType: 'image/png' });
    else if (parts.mediaType === 'application/x-www-form-urlencoded') call = call.type('form').send(sent);
    else if (sent !== undefined) call = call.type(parts.mediaType ?? 'json').send(sent);
    const res = await call;
    expect(res.status, `${op.method.toUpperCase()} ${url}: ${res.text.slice(0, 500)}`).toBe(expectedStatus(op, name));
  });
});

const DEMO_SELLER = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(56, 7)]);

/** The subscription example charged at once with the sandbox's token that leaves the charge pending. */
function withPendingToken(body: any, planId: string): any {
  const card = body.subscription.payment_type.credit.card ?? {};
  body.subscription.payment_type.credit.card = { ...card, number_token: 'tok_sandbox_pending' };
  return { ...body, plan_id: planId, order_id: `${body.order_id}-P${Math.random().toString(36).slice(2, 6)}` };
}
