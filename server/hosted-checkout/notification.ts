// The checkout notification of a hosted page payment, built as the contract's webhook schema says
// (modes instant and payment_link); enqueueCheckoutNotification validates it before storing it.
import type { CheckoutNotification } from '../http/contract.ts';
import { isoSeconds } from '../http/time.ts';
import { platformReferenceCode } from '../notifications/reference-code.ts';
import type { PaymentLinkRow } from '../payment-link/repository.ts';
import type { CheckoutSeller } from '../web-checkout/repository.ts';
import type { CheckoutAddress, CheckoutCustomer } from './form.ts';
import type { InstallmentOption } from './payment-methods.ts';
import type { CheckoutIntent } from './repository.ts';

type Payment = CheckoutNotification['payment'];
type Frontend = NonNullable<CheckoutNotification['frontend']>;

/** The hosted checkout front end's version, sent as `frontend.application_version`. */
export const HOSTED_CHECKOUT_VERSION = '1.0.0';

/** `frontend.time_page` is an int32 of the contract: a larger count from the page is left out. */
const INT32_MAX = 2_147_483_647;

const bounded = (value: unknown, max: number) => (typeof value === 'string' && value.trim() !== '' && value.length <= max ? value.trim() : undefined);

/** What the page's script reports (hidden fields) plus what the server sees (address, IP). */
export function frontendOfForm(form: Record<string, unknown>, facts: { link: string; ip: string }): Frontend {
  const seconds = Number(form.time_page);
  const timezone = bounded(form.timezone, 64);
  const locale = bounded(form.locale, 35);
  return {
    link: facts.link,
    ...(Number.isInteger(seconds) && seconds >= 0 && seconds <= INT32_MAX ? { time_page: seconds } : {}),
    sales_channel: 'WEB',
    application_version: HOSTED_CHECKOUT_VERSION,
    card_pasted: form.card_pasted === 'true',
    ip: facts.ip,
    ...(timezone ? { timezone } : {}),
    ...(locale ? { locale } : {}),
  };
}

export interface PaymentResult {
  paymentId: string;
  status: 'Authorized' | 'Denied';
  returnCode: string;
  returnMessage: string;
  authorizationCode?: string;
  at: Date;
  cardId?: string;
}

/** `payment` of the payload: the card's function as method (wallets report credit), installment only for credit ≥ 2. */
export function notificationPayment(p: {
  method: 'credit' | 'debit';
  amount: number;
  currency: string;
  installment?: InstallmentOption;
  result: PaymentResult;
}): Payment {
  const { result } = p;
  return {
    method: p.method,
    amount: p.amount,
    currency: p.currency,
    ...(p.method === 'credit' && p.installment && p.installment.number >= 2
      ? { installment: { type: p.installment.type, number: p.installment.number, schema: p.installment.schema } }
      : {}),
    result: {
      payment_id: result.paymentId,
      status: result.status,
      ...(result.authorizationCode ? { authorization_code: result.authorizationCode } : {}),
      transaction_datetime: isoSeconds(result.at),
      return_message: result.returnMessage,
      return_code: result.returnCode,
      ...(result.cardId ? { card_id: result.cardId } : {}),
    },
  };
}

export const notificationSeller = (seller: { sellerId: string; tradeName: string }): CheckoutNotification['seller'] => ({
  id: seller.sellerId,
  trade_name: seller.tradeName,
  settings: { notification_url_configured: true },
});

/** The payload of an intent's payment (mode `instant`): the intent's customer, shipping, order details and products. */
export function intentNotification(p: { checkoutId: string; intent: CheckoutIntent; seller: CheckoutSeller; payment: Payment; frontend: Frontend }): CheckoutNotification {
  const details = p.intent.orderDetails as Pick<CheckoutNotification, 'pickup_store' | 'shipping_method' | 'soft_descriptor'>;
  return {
    checkout_id: p.checkoutId,
    payment_intent_id: p.intent.paymentIntentId,
    ...(p.intent.orderId ? { order_id: p.intent.orderId } : {}),
    mode: 'instant',
    seller: notificationSeller(p.seller),
    customer: p.intent.customer as CheckoutNotification['customer'],
    ...(p.intent.shipping ? { shipping: p.intent.shipping as CheckoutNotification['shipping'] } : {}),
    payment: p.payment,
    frontend: p.frontend,
    ...(details.pickup_store !== undefined ? { pickup_store: details.pickup_store } : {}),
    ...(details.shipping_method !== undefined ? { shipping_method: details.shipping_method } : {}),
    ...(details.soft_descriptor !== undefined ? { soft_descriptor: details.soft_descriptor } : {}),
    reference_code: platformReferenceCode(),
    ...(p.intent.products ? { product: p.intent.products as CheckoutNotification['product'] } : {}),
  };
}

/** The payload of a link's payment (mode `payment_link`): the buyer, the delivery address when asked, the link's products. */
export function linkNotification(p: {
  checkoutId: string;
  orderId: string;
  referenceCode: string;
  link: PaymentLinkRow;
  seller: CheckoutSeller;
  customer: CheckoutCustomer;
  delivery?: CheckoutAddress;
  payment: Payment;
  frontend: Frontend;
}): CheckoutNotification {
  return {
    checkout_id: p.checkoutId,
    order_id: p.orderId,
    mode: 'payment_link',
    seller: notificationSeller(p.seller),
    customer: p.customer,
    ...(p.delivery
      ? { shipping: { first_name: p.customer.first_name, last_name: p.customer.last_name, name: p.customer.name, shipping_amount: p.link.shippingAmount, address: p.delivery } }
      : {}),
    payment: p.payment,
    frontend: p.frontend,
    reference_code: p.referenceCode,
    product: p.link.products.map((product) => ({
      ...(product.product_type ? { product_type: product.product_type } : {}),
      title: product.title,
      ...(product.description ? { description: product.description } : {}),
      value: product.amount,
      quantity: product.quantity ?? 1,
    })) as CheckoutNotification['product'],
  };
}
