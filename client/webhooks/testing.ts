// Test helpers for the merchant's receiver: a valid checkout notification of any mode, and the exact
// request the platform would send with it (JSON body, Basic credentials), so that a receiver is
// unit-tested without a sandbox. Every notification built here passes the contract's compiled check;
// overrides that break the contract are refused at once, naming the field.
import { base64OfText } from '../encoding.ts';
import { validateCheckoutNotification, type CheckoutNotification, type NotificationCredentials } from './verify.ts';

export type CheckoutNotificationMode = CheckoutNotification['mode'];
export type CheckoutPaymentStatus = CheckoutNotification['payment']['result']['status'];

export interface TestCheckoutNotificationOptions {
  /** `instant` (a payment intent, the default), `payment_link` or `recurring` (a subscription charge). */
  mode?: CheckoutNotificationMode | undefined;
  /** `Authorized` (default) or `Denied`. */
  status?: CheckoutPaymentStatus | undefined;
  /** Amount in minor units (default 15990) and currency (default BRL). */
  amount?: number | undefined;
  currency?: string | undefined;
  /** The merchant's order id (default: one made up per mode). */
  orderId?: string | undefined;
  /** `seller.id` (default: the reference sandbox's demo seller). */
  sellerId?: string | undefined;
  /** Top-level fields replaced as given (`payment`, `customer`, `seller`, ...), after the above. */
  overrides?: Partial<CheckoutNotification> | undefined;
}

const customer: NonNullable<CheckoutNotification['customer']> = {
  customer_id: '52998224725', first_name: 'Maria', last_name: 'Souza', name: 'Maria Souza', email: 'maria@example.com',
  document_type: 'CPF', document_number: '52998224725',
  billing_address: { street: 'Rua das Flores', number: '120', city: 'São Paulo', state: 'SP', country: 'BR', postal_code: '01310100' },
};

/** The demo seller of the reference sandbox, the default seller of a test notification. */
const DEMO_SELLER_ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';

/** The seller as every notification names it (`settings.notification_url_configured` is true: it was sent). */
const seller = (sellerId: string): NonNullable<CheckoutNotification['seller']> => ({
  id: sellerId,
  // The reference sandbox's demo seller's name for its id, a made-up one for another.
  trade_name: sellerId === DEMO_SELLER_ID ? 'Café da Montanha' : 'Loja de Teste',
  settings: { notification_url_configured: true },
});

/** What a hosted page reports of itself: sent for `instant` and `payment_link`, never for `recurring` (no page). */
const frontend = (link: string): NonNullable<CheckoutNotification['frontend']> => ({
  link,
  time_page: 42,
  sales_channel: 'WEB',
  application_version: '1.0.0',
  card_pasted: false,
  ip: '203.0.113.7',
  timezone: 'America/Sao_Paulo',
  locale: 'pt-BR',
});

const referenceCode = () => crypto.randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase();

/**
 * A checkout notification as the platform sends it, valid against the contract: fresh ids, the
 * fields of the mode as the reference sandbox sends them (`payment_intent_id` only for `instant`;
 * `customer` and `frontend` for `instant` and `payment_link`, not for `recurring`, which has no
 * buyer at a page; `seller` always), the result of the status.
 */
export function buildCheckoutNotification(options: TestCheckoutNotificationOptions = {}): CheckoutNotification {
  const mode = options.mode ?? 'instant';
  const status = options.status ?? 'Authorized';
  const amount = options.amount ?? 15990;
  const authorized = status === 'Authorized';
  const productType = mode === 'recurring' ? 'renew_subs' : mode === 'payment_link' ? 'service' : 'physical_goods';
  const paymentIntentId = crypto.randomUUID();
  const atPage = mode === 'instant' ? `https://sandbox.example/checkout/${paymentIntentId}` : mode === 'payment_link' ? 'https://sandbox.example/pay/Xk7pQ2aZ' : undefined;
  const notification: CheckoutNotification = {
    checkout_id: crypto.randomUUID(),
    ...(mode === 'instant' ? { payment_intent_id: paymentIntentId } : {}),
    order_id: options.orderId ?? (mode === 'instant' ? 'PED-TEST-0001' : mode === 'payment_link' ? crypto.randomUUID() : 'ASSIN-TEST-0001'),
    mode,
    seller: seller(options.sellerId ?? DEMO_SELLER_ID),
    ...(atPage ? { customer, frontend: frontend(atPage) } : {}),
    payment: {
      method: 'credit',
      amount,
      currency: options.currency ?? 'BRL',
      result: {
        payment_id: crypto.randomUUID(),
        status,
        ...(authorized ? { authorization_code: '123456' } : {}),
        transaction_datetime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        return_message: authorized ? 'Transaction approved' : 'Insufficient funds',
        return_code: authorized ? '00' : '51',
      },
    },
    reference_code: referenceCode(),
    product: [{ product_type: productType, title: 'Produto de teste', value: amount, quantity: 1 }],
    ...options.overrides,
  };
  // Throws a CheckoutNotificationError naming the field when an override breaks the contract.
  return validateCheckoutNotification(notification);
}

/** The `Authorization` header the platform sends: Basic with the merchant's notification credentials. */
export function notificationAuthorization(credentials: NotificationCredentials): string {
  return `Basic ${base64OfText(`${credentials.user}:${credentials.password}`)}`;
}

/** The delivery as the merchant's server receives it. */
export interface TestNotificationDelivery {
  method: 'POST';
  headers: { 'content-type': 'application/json'; authorization: string };
  /** The JSON text, as it travels. */
  body: string;
  notification: CheckoutNotification;
  /** The same delivery as a Fetch API `Request` to `url` (for a `(Request) => Response` handler). */
  toRequest(url?: string): Request;
}

/**
 * The request the platform would send for `notification` (built with `buildCheckoutNotification`
 * when omitted): POST, JSON body, Basic credentials. Give other credentials to test a refusal.
 */
export function checkoutNotificationRequest(
  credentials: NotificationCredentials,
  notification: CheckoutNotification = buildCheckoutNotification(),
): TestNotificationDelivery {
  const headers = { 'content-type': 'application/json', authorization: notificationAuthorization(credentials) } as const;
  const body = JSON.stringify(notification);
  return {
    method: 'POST',
    headers,
    body,
    notification,
    toRequest: (url = 'http://merchant.test/webhooks/checkout') => new Request(url, { method: 'POST', headers, body }),
  };
}
