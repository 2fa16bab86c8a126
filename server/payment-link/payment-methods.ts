// The payment methods configuration (`payment` / `payments`) and the seed's availability by country.
// Whoever stores a configuration refuses a method the seller's country lacks; every answer carries
// all seven method keys, an unavailable method always `enabled: false` (PaymentMethodsConfiguration).
import type { components } from '../http/contract.ts';
import type { Problem } from '../http/errors.ts';

type Schemas = components['schemas'];
export type PaymentMethodKey = Schemas['PaymentMethodKey'];
export type CountryCode = 'BR' | 'MX' | 'AR' | 'CL' | 'ES' | 'UY';

/** The configuration as stored: every key optional (the contract's type adds "at least one enabled"). */
export interface PaymentMethods {
  credit?: Schemas['CreditPaymentMethod'];
  debit?: Schemas['DebitPaymentMethod'];
  bankslip?: Schemas['PaymentMethodToggle'];
  instant_payment?: Schemas['PaymentMethodToggle'];
  google_pay?: Schemas['PaymentMethodToggle'];
  apple_pay?: Schemas['PaymentMethodToggle'];
  c2p_master?: Schemas['PaymentMethodToggle'];
}

/** Canonical order (PaymentMethodKey, and the order of `payment_types`). */
export const PAYMENT_METHOD_KEYS: readonly PaymentMethodKey[] = ['credit', 'debit', 'bankslip', 'instant_payment', 'google_pay', 'apple_pay', 'c2p_master'];

/** The seed's availability table. */
const AVAILABLE_IN: Record<PaymentMethodKey, readonly CountryCode[]> = {
  credit: ['BR', 'MX', 'AR', 'CL', 'ES', 'UY'],
  debit: ['BR', 'MX', 'AR', 'CL', 'ES', 'UY'],
  bankslip: ['BR'],
  instant_payment: ['BR'],
  google_pay: ['BR'],
  apple_pay: ['BR'],
  c2p_master: ['AR'],
};

/** Whether the seed's availability table has `method` in `country`. */
export function isMethodAvailable(country: string, method: PaymentMethodKey): boolean {
  return (AVAILABLE_IN[method] as readonly string[]).includes(country);
}

const isEnabled = (payment: PaymentMethods, key: PaymentMethodKey) => payment[key]?.enabled === true;

/**
 * One problem per enabled method the country lacks (422 `validation_error` in the sandbox area);
 * `path` is where the configuration sits in the request body (`/payments`).
 */
export function unavailableMethodProblems(country: string, payment: PaymentMethods, path: string): Problem[] {
  return PAYMENT_METHOD_KEYS.filter((key) => isEnabled(payment, key) && !isMethodAvailable(country, key)).map((key) => ({
    location: 'body',
    pointer: `${path}/${key}/enabled`,
    message: `${key} is available in ${AVAILABLE_IN[key].join(', ')} only`,
  }));
}

/** The configuration with all seven keys: a missing method, or one the country lacks, is `enabled: false`. */
export function withEveryMethod(country: string, payment: PaymentMethods): Required<PaymentMethods> {
  const entries = PAYMENT_METHOD_KEYS.map((key) => {
    const method = payment[key];
    if (!method || !isMethodAvailable(country, key)) return [key, { ...method, enabled: false }];
    return [key, method];
  });
  return Object.fromEntries(entries) as Required<PaymentMethods>;
}

/** `payment_types` of a business configuration: the enabled keys, in canonical order. */
export function enabledPaymentTypes(payment: PaymentMethods): PaymentMethodKey[] {
  return PAYMENT_METHOD_KEYS.filter((key) => isEnabled(payment, key));
}

/** A configuration as the contract types it (the schema's "at least one enabled" is checked at runtime). */
export const asContract = (payment: PaymentMethods) => payment as Schemas['PaymentMethodsConfiguration'];
