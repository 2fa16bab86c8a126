// Stored rows as the contract's bodies. The sandbox always sends every field the schemas list
// (the contract marks none required), an unavailable payment method always `enabled: false`.
import type { components } from '../http/contract.ts';
import { asContract, enabledPaymentTypes, withEveryMethod } from './payment-methods.ts';
import type { BusinessConfigurationRow, OrderRow, PaymentLinkRow, SellerRow } from './repository.ts';

type Schemas = components['schemas'];

const SERVICE_KEYS = ['checkout', 'vault', 'card_verification', 'preauthorization', 'unico_id', 'threeds', 'anti_fraud', 'payment_link', 'tokenization'] as const;

/** All nine service flags; an absent one is off (SellerServices). */
export function everyService(services: Schemas['SellerServices'] = {}): Required<Schemas['SellerServices']> {
  return Object.fromEntries(SERVICE_KEYS.map((key) => [key, services[key] === true])) as Required<Schemas['SellerServices']>;
}

export function sellerBody(s: SellerRow): Schemas['Seller'] {
  return {
    seller_id: s.sellerId,
    merchant_id: s.merchantId,
    seller_code: s.sellerCode,
    trade_name: s.tradeName,
    email: s.email,
    country: s.country,
    currencies: s.currencies,
    services: everyService(s.services),
    payments: asContract(withEveryMethod(s.country, s.payments)),
  };
}

export function businessConfigurationBody(c: BusinessConfigurationRow, country: string): Schemas['BusinessConfiguration'] {
  const payment = withEveryMethod(country, c.payment);
  return {
    ...(c.expiration ? { expiration: c.expiration.toISOString() } : {}),
    ...(c.maxOrders !== null ? { max_orders: c.maxOrders } : {}),
    request_delivery_address: c.requestDeliveryAddress,
    payment: asContract(payment),
    payment_types: enabledPaymentTypes(payment),
    currency: c.currency,
  };
}

export function paymentLinkBody(l: PaymentLinkRow): Schemas['PaymentLink'] {
  return {
    link_id: l.linkId,
    short_id: l.shortId,
    seller_id: l.sellerId,
    label: l.label,
    ...(l.expiration ? { expiration: l.expiration.toISOString() } : {}),
    ...(l.maxOrders !== null ? { max_orders: l.maxOrders } : {}),
    type: l.type,
    successful_sales: l.successfulSales,
    request_delivery_address: l.requestDeliveryAddress,
    shipping_amount: l.shippingAmount,
    products: l.products,
    payment: asContract(withEveryMethod(l.country, l.payment)),
    status: l.status,
    created_at: l.createdAt.toISOString(),
    updated_at: l.updatedAt.toISOString(),
    currency: l.currency,
  };
}

export function orderBody(o: OrderRow): Schemas['Order'] {
  return {
    order_id: o.orderId,
    link_id: o.linkId,
    currency: o.currency,
    amount: o.amount,
    reference_code: o.referenceCode,
    checkout_id: o.checkoutId,
    customer: o.customer,
    ...(o.shipping ? { shipping: o.shipping } : {}),
    status: o.status,
    history: o.history,
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
  };
}
