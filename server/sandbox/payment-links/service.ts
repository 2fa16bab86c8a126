// The rules of sandbox link creation (createSandboxPaymentLink): an ACTIVE link with a new short id,
// omitted fields from the seller's business configuration, images of that seller only.
import { randomUUID } from 'node:crypto';
import type { components } from '../../http/contract.ts';
import { MAX_AMOUNT, withinAmountBound } from '../../http/amounts.ts';
import { ApiError } from '../../http/errors.ts';
import type { PaymentMethods } from '../../payment-link/payment-methods.ts';
import { orderTotal } from '../../payment-link/orders.ts';
import { paymentLinkRepository, type PaymentLinkRow } from '../../payment-link/repository.ts';
import { foldCase, newShortId } from '../../payment-link/service.ts';
import type { Store } from '../../store/store.ts';
import { checkCents, checkCountryMethods, checkCurrenciesCarried, checkExpirationAhead, checkSellerCurrency, validationError } from '../sellers/service.ts';

type SandboxPaymentLinkCreate = components['schemas']['SandboxPaymentLinkCreate'];

/** Draws of a short id before giving up: a collision among 62^8 ids is rare, three in a row a bug. */
const SHORT_ID_ATTEMPTS = 5;

/** `unique` sells once: max_orders 1; another explicit value is refused. */
export function maxOrdersOf(input: Pick<SandboxPaymentLinkCreate, 'type' | 'max_orders'>, fallback: number | null): number | null {
  if (input.type !== 'unique') return input.max_orders ?? fallback;
  if (input.max_orders !== undefined && input.max_orders !== 1) {
    throw validationError([{ location: 'body', pointer: '/max_orders', message: 'a unique link has max_orders 1' }]);
  }
  return 1;
}

/** Every order of the link is priced at Σ(amount × quantity) + shipping_amount: it must be an amount the contract carries. */
export function checkOrderTotalWithinBound(input: Pick<SandboxPaymentLinkCreate, 'products' | 'shipping_amount'>): void {
  const total = orderTotal({ products: input.products, shippingAmount: input.shipping_amount ?? 0 });
  if (!withinAmountBound(total)) {
    throw validationError([{ location: 'body', pointer: '/products', message: `the order total (Σ amount × quantity + shipping_amount) must be at most ${MAX_AMOUNT}` }]);
  }
}

export async function createSandboxPaymentLink(
  store: Store,
  input: SandboxPaymentLinkCreate,
  options: { now?: Date; shortId?: () => string } = {},
): Promise<PaymentLinkRow> {
  const repository = paymentLinkRepository(store);
  const now = options.now ?? new Date();
  checkOrderTotalWithinBound(input);
  const seller = await repository.findSeller(input.seller_id);
  if (!seller) throw new ApiError(404, 'seller_not_found', 'Seller not found');
  const defaults = await repository.findBusinessConfiguration(seller.sellerId);

  const payment = (input.payment as PaymentMethods | undefined) ?? defaults?.payment ?? seller.payments;
  checkCountryMethods(seller.country, payment, '/payment');
  const currency = input.currency ?? defaults?.currency ?? seller.currencies[0]!;
  checkSellerCurrency(seller.currencies, currency, '/currency');
  checkCurrenciesCarried([{ pointer: '/currency', value: currency }]);
  checkCents(currency, [
    ...input.products.map((p, i) => ({ pointer: `/products/${i}/amount`, value: p.amount })),
    { pointer: '/shipping_amount', value: input.shipping_amount },
  ]);
  const expiration = input.expiration ? new Date(input.expiration) : (defaults?.expiration ?? null);
  // A default expiration passed since it was set: the link would be born expired, and the request
  // named no expiration, so the problem says whose it is.
  checkExpirationAhead(expiration, now, '/expiration', input.expiration ? 'expiration' : "the business configuration's default expiration");

  // An image id is a UUID in any case; kept in the canonical lower case that uploads answer.
  const products = input.products.map((p) => (p.image_id ? { ...p, image_id: p.image_id.toLowerCase() } : p));
  const imageIds = products.flatMap((p) => (p.image_id ? [p.image_id] : []));
  const owned = await repository.sellerImageIds(seller.sellerId, imageIds);
  const foreign = products.flatMap((p, i) => (p.image_id && !owned.has(p.image_id) ? [i] : []));
  if (foreign.length) {
    throw validationError(foreign.map((i) => ({ location: 'body', pointer: `/products/${i}/image_id`, message: `products.${i}.image_id is not an image uploaded by this seller` })));
  }

  const link = {
    linkId: randomUUID(),
    sellerId: seller.sellerId,
    label: input.label,
    expiration,
    maxOrders: maxOrdersOf(input, defaults?.maxOrders ?? null),
    type: input.type,
    requestDeliveryAddress: input.request_delivery_address ?? defaults?.requestDeliveryAddress ?? false,
    shippingAmount: input.shipping_amount ?? 0,
    products,
    payment,
    currency,
    labelFolded: foldCase(input.label),
    productTitlesFolded: input.products.map((p) => foldCase(p.title)),
    createdAt: now,
  };
  for (let attempt = 0; attempt < SHORT_ID_ATTEMPTS; attempt++) {
    const shortId = (options.shortId ?? newShortId)();
    if (await repository.insertPaymentLink({ ...link, shortId })) {
      const created = await repository.findPaymentLink(seller.sellerId, link.linkId, now);
      if (created) return created;
    }
  }
  throw new Error(`No free short id after ${SHORT_ID_ATTEMPTS} attempts`);
}
