// The checkout notification of a hosted page payment, built as the contract's webhook schema says
// (modes instant and payment_link); enqueueCheckoutNotification validates it before storing it.
import { randomInt } from 'node:crypto';
import type { CheckoutNotification } from '../http/contract.ts';
import type { InstallmentOption } from './payment-methods.ts';

type Payment = CheckoutNotification['payment'];
type Frontend = NonNullable<CheckoutNotification['frontend']>;

/** The hosted checkout front end's version, sent as `frontend.application_version`. */
export const HOSTED_CHECKOUT_VERSION = '1.0.0';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** Contract decision: for `instant`, the platform's reference of the checkout, 12 upper-case letters and digits. */
export const platformReferenceCode = () => Array.from({ length: 12 }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');

/** ISO 8601 UTC with seconds, no fraction (contract decision on `transaction_datetime`). */
export const transactionDatetime = (at: Date) => at.toISOString().replace(/\.\d{3}Z$/, 'Z');

const bounded = (value: unknown, max: number) => (typeof value === 'string' && value.trim() !== '' && value.length <= max ? value.trim() : undefined);

/** What the page's script reports (hidden fields) plus what the server sees (address, IP). */
export function frontendOfForm(form: Record<string, unknown>, facts: { link: string; ip: string }): Frontend {
  const seconds = Number(form.time_page);
  const timezone = bounded(form.timezone, 64);
  const locale = bounded(form.locale, 35);
  return {
    link: facts.link,
    ...(Number.isSafeInteger(seconds) && seconds >= 0 ? { time_page: seconds } : {}),
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
      transaction_datetime: transactionDatetime(result.at),
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
