// The rules of sandbox seller creation (createSandboxSeller): the contract's defaults, the country's
// payment methods, and credentials issued once (the secret is stored hashed, shown only here).
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { authenticationRepository } from '../../authentication/repository.ts';
import { GATEWAY_SCOPE } from '../../authentication/scope.ts';
import { hashClientSecret, hashCostOf } from '../../authentication/secrets.ts';
import type { components } from '../../http/contract.ts';
import { centsProblems, currencyProblem, type AmountAt } from '../../http/amounts.ts';
import { ApiError, type Problem } from '../../http/errors.ts';
import { everyService } from '../../payment-link/bodies.ts';
import { isMethodAvailable, unavailableMethodProblems, type CountryCode, type PaymentMethods } from '../../payment-link/payment-methods.ts';
import { paymentLinkRepository, type BusinessConfigurationRow, type SellerRow } from '../../payment-link/repository.ts';
import type { Store } from '../../store/store.ts';
import { sandboxSellerRepository } from './repository.ts';

type SandboxSellerCreate = components['schemas']['SandboxSellerCreate'];

/** 422 validation_error of the sandbox area: a rule the schema cannot carry (SandboxError). */
export function validationError(problems: Problem[], message = problems.map((p) => p.message).join('; ')): ApiError {
  return new ApiError(422, 'validation_error', message, problems);
}

/**
 * Default payments: credit and debit with VISA and MASTERCARD (credit in 2 to 12 installments
 * without interest), plus every other method the country has.
 */
export function defaultPayments(country: string, currencies: string[]): PaymentMethods {
  const installments = [{ schema: 'SANDBOX-12', schema_name: 'Up to 12 installments without interest', installments: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] }];
  const brands = ['VISA', 'MASTERCARD'] as const;
  const toggle = (key: 'bankslip' | 'instant_payment' | 'google_pay' | 'apple_pay' | 'c2p_master') => ({ enabled: isMethodAvailable(country, key) });
  return {
    credit: { enabled: true, brands: brands.map((brand) => ({ enabled: true, brand, currencies, threeds: true, supported_installments: installments })) },
    debit: { enabled: true, brands: brands.map((brand) => ({ enabled: true, brand, currencies, threeds: true })) },
    bankslip: toggle('bankslip'),
    instant_payment: toggle('instant_payment'),
    google_pay: toggle('google_pay'),
    apple_pay: toggle('apple_pay'),
    c2p_master: toggle('c2p_master'),
  };
}

/** 422 when a configuration enables a method the seller's country lacks (seed availability table). */
export function checkCountryMethods(country: string, payment: PaymentMethods, pointer: string): void {
  const problems = unavailableMethodProblems(country, payment, pointer);
  if (problems.length === 0) return;
  const keys = problems.map((p) => p.pointer.split('/').at(-2));
  throw validationError(problems, `${keys.join(', ')} ${keys.length === 1 ? 'is' : 'are'} not available in ${country}`);
}

/** 422 when a currency is not one the seller sells in. */
export function checkSellerCurrency(currencies: string[], currency: string, pointer: string): void {
  if (currencies.includes(currency)) return;
  throw validationError([{ location: 'body', pointer, message: `${currency} is not one of the seller's currencies (${currencies.join(', ')})` }]);
}

/** Omitted business configuration fields: the seller's payments and first currency, no expiration or limit. */
export function defaultBusinessConfiguration(
  input: SandboxSellerCreate['business_configuration'],
  seller: Pick<SellerRow, 'payments' | 'currencies'>,
): BusinessConfigurationRow {
  return {
    expiration: input?.expiration ? new Date(input.expiration) : null,
    maxOrders: input?.max_orders ?? null,
    requestDeliveryAddress: input?.request_delivery_address ?? false,
    payment: (input?.payment as PaymentMethods | undefined) ?? seller.payments,
    currency: input?.currency ?? seller.currencies[0]!,
  };
}

const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');

export interface CreatedSandboxSeller {
  seller: SellerRow;
  credentials: { client_id: string; client_secret: string; scope: string };
}

/**
 * A link is created ACTIVE, so its expiration must be in the future (PaymentLink.status): a link's
 * own, and a seller's default for its links. `what` names it in the problem.
 */
export function checkExpirationAhead(expiration: Date | null, now: Date, pointer: string, what = 'expiration'): void {
  if (expiration && expiration.getTime() <= now.getTime()) {
    throw validationError([{ location: 'body', pointer, message: `${what} must be in the future` }]);
  }
}

/** 422 for each currency the platform cannot carry (more than two decimals: the contract's money module). */
export function checkCurrenciesCarried(currencies: ReadonlyArray<{ pointer: string; value: string }>): void {
  const problems = currencies.flatMap(({ pointer, value }): Problem[] => {
    const message = currencyProblem(value);
    return message ? [{ location: 'body', pointer, message }] : [];
  });
  if (problems.length) throw validationError(problems);
}

/** 422 for each amount of `currency` that breaks the seed's money rule (a currency without cents ends in 00). */
export function checkCents(currency: string, amounts: readonly AmountAt[]): void {
  const problems = centsProblems(currency, amounts);
  if (problems.length) throw validationError(problems);
}

export async function createSandboxSeller(store: Store, input: SandboxSellerCreate): Promise<CreatedSandboxSeller> {
  const country = input.country as CountryCode;
  checkCurrenciesCarried(input.currencies.map((value, i) => ({ pointer: `/currencies/${i}`, value })));
  const payments = (input.payments as PaymentMethods | undefined) ?? defaultPayments(country, input.currencies);
  checkCountryMethods(country, payments, '/payments');
  const seller: SellerRow = {
    sellerId: randomUUID(),
    merchantId: input.merchant_id ?? digits(15),
    sellerCode: input.seller_code ?? `SBX-${digits(6)}`,
    tradeName: input.trade_name,
    email: input.email,
    country,
    currencies: input.currencies,
    services: everyService(input.services ?? Object.fromEntries(['checkout', 'vault', 'card_verification', 'preauthorization', 'unico_id', 'threeds', 'anti_fraud', 'payment_link', 'tokenization'].map((k) => [k, true]))),
    payments,
    tenant: input.tenant ?? 'sandbox',
  };
  const configuration = defaultBusinessConfiguration(input.business_configuration, seller);
  checkCountryMethods(country, configuration.payment, '/business_configuration/payment');
  checkSellerCurrency(seller.currencies, configuration.currency, '/business_configuration/currency');
  checkExpirationAhead(configuration.expiration, new Date(), '/business_configuration/expiration');

  const clientId = input.client_id ?? `sbx-${randomBytes(8).toString('hex')}`;
  const clientSecret = input.client_secret ?? randomBytes(24).toString('base64url');
  const secretHash = await hashClientSecret(clientSecret, hashCostOf(store));
  await store.transaction(async (tx) => {
    await sandboxSellerRepository(tx).insertSeller({ ...seller, recurrenceEnabled: input.recurrence_enabled ?? true });
    await paymentLinkRepository(tx).insertBusinessConfiguration(seller.sellerId, configuration);
    const inserted = await authenticationRepository(tx).insertApiClient({ clientId, sellerId: seller.sellerId, secretHash });
    if (!inserted) throw new ApiError(409, 'conflict', `client_id ${clientId} is already taken`);
  });
  return { seller, credentials: { client_id: clientId, client_secret: clientSecret, scope: GATEWAY_SCOPE } };
}
