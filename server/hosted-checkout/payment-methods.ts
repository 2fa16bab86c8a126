// What a hosted page offers: the seller's (or the link's) payment configuration, cut down to the
// methods its country has and the checkout can take, and the installment options of its credit brands.
import { isMethodAvailable, type PaymentMethods } from '../payment-link/payment-methods.ts';
import type { PaymentIntentFlow } from '../web-checkout/repository.ts';

/** Card-based methods only (contract: bankslip and instant payment are not offered on the hosted page). */
export type CheckoutMethod = 'credit' | 'debit' | 'google_pay' | 'apple_pay' | 'c2p_master';
export const CARD_METHODS = ['credit', 'debit'] as const;
export const WALLETS = ['google_pay', 'apple_pay', 'c2p_master'] as const;
export const isWallet = (method: CheckoutMethod): method is (typeof WALLETS)[number] => (WALLETS as readonly string[]).includes(method);

export const METHOD_LABELS: Record<CheckoutMethod, string> = {
  credit: 'Credit card',
  debit: 'Debit card',
  google_pay: 'Google Pay',
  apple_pay: 'Apple Pay',
  c2p_master: 'Click to Pay',
};

/**
 * The methods a page offers, in this order: credit, debit, then wallets. Each must be enabled in the
 * configuration and available in the seller's country (the seed's table). A card verification
 * stores a typed card, so it offers the card methods only.
 */
export function offeredMethods(country: string, payments: PaymentMethods, flow: PaymentIntentFlow = 'standard'): CheckoutMethod[] {
  const candidates: CheckoutMethod[] = flow === 'card_verification' ? [...CARD_METHODS] : [...CARD_METHODS, ...WALLETS];
  return candidates.filter((method) => payments[method]?.enabled === true && isMethodAvailable(country, method));
}

type BrandConfig = { enabled: boolean; brand: string; threeds?: boolean; supported_installments?: InstallmentSchema[] };
type InstallmentSchema = {
  schema: string;
  schema_name?: string;
  installments: number[];
  installments_with_interest?: number[];
  installments_with_increase?: Array<{ installments: number[]; rate: number }>;
};

/** Bin-table brand (`Visa`) as the payment configuration writes it (`VISA`). */
export const configurationBrand = (brand: string | undefined) => brand?.toUpperCase();

/** The enabled brand configuration of a card method, or undefined when the seller does not take that brand there. */
export function acceptedBrand(payments: PaymentMethods, method: 'credit' | 'debit', brand: string | undefined): BrandConfig | undefined {
  const wanted = configurationBrand(brand);
  if (!wanted || payments[method]?.enabled !== true) return undefined;
  const brands = (payments[method]?.brands ?? []) as BrandConfig[];
  return brands.find((b) => b.enabled && b.brand === wanted);
}

export interface InstallmentOption {
  number: number;
  type: 'no_interest' | 'with_interest';
  schema: string;
  schemaName?: string;
  /** Surcharge rate in percent (installments_with_increase). */
  rate?: number;
}

/** An installment count of one schema: with interest when listed so or in a surcharge group. */
function optionOf(schema: InstallmentSchema, number: number): InstallmentOption {
  const group = schema.installments_with_increase?.find((g) => g.installments.includes(number));
  const withInterest = schema.installments_with_interest?.includes(number) === true || group !== undefined;
  return {
    number,
    type: withInterest ? 'with_interest' : 'no_interest',
    schema: schema.schema,
    ...(schema.schema_name ? { schemaName: schema.schema_name } : {}),
    ...(group ? { rate: group.rate } : {}),
  };
}

/**
 * Credit installment options (≥ 2) of the given brands' schemas, each count once (the first schema
 * that lists it wins), sorted. Paying in full (1) is always possible and not listed.
 */
export function installmentOptions(brands: BrandConfig[]): InstallmentOption[] {
  const byNumber = new Map<number, InstallmentOption>();
  for (const brand of brands.filter((b) => b.enabled)) {
    for (const schema of brand.supported_installments ?? []) {
      for (const number of schema.installments) if (number >= 2 && !byNumber.has(number)) byNumber.set(number, optionOf(schema, number));
    }
  }
  return [...byNumber.values()].sort((a, b) => a.number - b.number);
}

/** The installment options the page lists: those of every enabled credit brand. */
export function pageInstallmentOptions(payments: PaymentMethods): InstallmentOption[] {
  if (payments.credit?.enabled !== true) return [];
  return installmentOptions((payments.credit.brands ?? []) as BrandConfig[]);
}

/**
 * Contract decision (`configurations.3ds`): 3DS runs when the request did not set it false and
 * both the seller's threeds service and the brand's threeds are on. When it does not run, no
 * cardholder authentication can fail.
 */
export function threeDsRuns(sellerThreeds: boolean | undefined, brand: Pick<BrandConfig, 'threeds'> | undefined, requested: unknown): boolean {
  return requested !== false && sellerThreeds === true && brand?.threeds === true;
}
