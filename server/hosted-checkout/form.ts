// The payment form of a hosted page: the method, card and installments chosen (checked against what
// the page offers), the buyer and the addresses of a link page, within the contract's limits.
import type { CheckoutNotification } from '../http/contract.ts';
import { isEmail } from '../http/formats.ts';
import type { PaymentMethods } from '../payment-link/payment-methods.ts';
import { DOCUMENT_TYPES_BY_COUNTRY } from '../web-checkout/service.ts';
import { cardOfForm, type TypedCard } from './card.ts';
import { PageError } from './page-error.ts';
import { acceptedBrand, installmentOptions, isWallet, offeredMethods, threeDsRuns, type CheckoutMethod, type InstallmentOption } from './payment-methods.ts';
import type { CheckoutIntent } from './repository.ts';

export type Form = Record<string, unknown>;

export interface ChosenPayment {
  method: CheckoutMethod;
  /** The card's function as the notification reports it (wallets: credit). */
  notifiedMethod: 'credit' | 'debit';
  card?: TypedCard;
  installment?: InstallmentOption;
  threeDs: boolean;
}

/** The method, card and installments of a form post, checked against what the page offers. */
export function chosenPayment(
  form: Form,
  p: { country: string; payments: PaymentMethods; flow?: CheckoutIntent['flow']; sellerThreeds?: boolean; requested3ds?: unknown; now: Date },
): ChosenPayment {
  const offered = offeredMethods(p.country, p.payments, p.flow);
  const method = form.method as CheckoutMethod;
  if (!offered.includes(method)) throw new PageError(422, 'form', 'Choose one of the payment methods offered.');
  if (isWallet(method)) return { method, notifiedMethod: 'credit', threeDs: false };
  const parsed = cardOfForm(form, p.now);
  if ('problem' in parsed) throw new PageError(422, 'form', parsed.problem);
  const brand = acceptedBrand(p.payments, method, parsed.card.brand);
  if (!brand) throw new PageError(422, 'form', `This ${method} card (${parsed.card.brand ?? 'unknown brand'}) is not accepted here.`);
  const count = Number(form.installments ?? 1);
  let installment: InstallmentOption | undefined;
  if (method === 'credit' && p.flow !== 'card_verification' && count !== 1) {
    installment = installmentOptions([brand]).find((o) => o.number === count);
    if (!installment) throw new PageError(422, 'form', `${parsed.card.brand} cards cannot be paid in ${form.installments} installments here.`);
  }
  return { method, notifiedMethod: method, card: parsed.card, installment, threeDs: threeDsRuns(p.sellerThreeds, brand, p.requested3ds) };
}

export type CheckoutCustomer = CheckoutNotification['customer'] & object;
export type CheckoutAddress = CheckoutCustomer['billing_address'];

const field = (form: Form, name: string, max: number, label: string, required = true): string | undefined => {
  const value = typeof form[name] === 'string' ? (form[name] as string).trim() : '';
  if (!value) {
    if (required) throw new PageError(422, 'form', `${label} is required.`);
    return undefined;
  }
  if (value.length > max) throw new PageError(422, 'form', `${label} has at most ${max} characters.`);
  return value;
};

/** An address of the form (`prefix` '' for billing, 'delivery_' for delivery), within the contract's limits. */
export function addressOfForm(form: Form, prefix: string, country: string): CheckoutAddress {
  const what = prefix ? 'Delivery' : 'Billing';
  const postal = field(form, `${prefix}postal_code`, 9, `${what} postal code`)!.replace(/[\s-]/g, '');
  if (!/^[A-Za-z0-9]{1,8}$/.test(postal)) throw new PageError(422, 'form', `${what} postal code has at most 8 letters or digits.`);
  const optional = (name: string, max: number, label: string) => {
    const value = field(form, `${prefix}${name}`, max, `${what} ${label}`, false);
    return value ? { [name]: value } : {};
  };
  return {
    street: field(form, `${prefix}street`, 60, `${what} street`)!,
    number: field(form, `${prefix}number`, 10, `${what} number`)!,
    ...optional('complement', 60, 'complement'),
    ...optional('district', 40, 'district'),
    ...optional('city', 40, 'city'),
    ...optional('state', 20, 'state'),
    country,
    postal_code: postal,
  };
}

const NAME_MAX = 120;

/** The buyer of a link page: the checkout customer (customer_id = the document digits), checked. */
export function buyerOfForm(form: Form, country: string): CheckoutCustomer {
  const first = field(form, 'first_name', 60, 'First name')!;
  const last = field(form, 'last_name', 60, 'Last name')!;
  // The contract's `name` (at most 120 characters) is both, with a space between.
  if (first.length + 1 + last.length > NAME_MAX) throw new PageError(422, 'form', `First and last name together have at most ${NAME_MAX - 1} characters.`);
  const email = field(form, 'email', 120, 'E-mail')!;
  if (!isEmail(email)) throw new PageError(422, 'form', 'The e-mail address is not valid.');
  const types = DOCUMENT_TYPES_BY_COUNTRY[country] ?? [];
  const documentType = String(form.document_type ?? types[0] ?? '');
  if (!types.includes(documentType)) throw new PageError(422, 'form', `The document type must be one of ${types.join(', ')}.`);
  const documentNumber = field(form, 'document_number', 20, 'Document number')!.replace(/[\s./-]/g, '');
  if (!/^[A-Za-z0-9]+$/.test(documentNumber)) throw new PageError(422, 'form', 'The document number has letters and digits only.');
  const phone = field(form, 'phone_number', 20, 'Phone number', false);
  return {
    customer_id: documentNumber,
    first_name: first,
    last_name: last,
    name: `${first} ${last}`,
    email,
    document_type: documentType as CheckoutCustomer['document_type'],
    document_number: documentNumber,
    ...(phone ? { phone_number: phone } : {}),
    billing_address: addressOfForm(form, '', country),
  };
}
