// Orders of a payment link and their state machine (Order.status in the contract). No operation of
// the platform creates orders: the checkout does, through createOrder and updateOrderStatus. Both
// take the caller's transaction (`store.transaction(tx => createOrder(tx, ...))`): they lock the
// link (then the order), so concurrent payments count sales exactly.
import { randomUUID } from 'node:crypto';
import type { components } from '../http/contract.ts';
import { ApiError } from '../http/errors.ts';
import type { Queryable } from '../store/store.ts';
import { paymentLinkRepository, type OrderRow, type OrderStatus, type PaymentLinkRow } from './repository.ts';
import { PAYMENT_LINK_NOT_FOUND } from './errors.ts';

type Schemas = components['schemas'];

/** From → the statuses it may move to. denied, authentication_denied and refunded are final. */
export const ORDER_TRANSITIONS: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: ['approved', 'denied', 'authentication_denied', 'paid'],
  approved: ['refunded'],
  paid: ['refunded'],
  denied: [],
  authentication_denied: [],
  refunded: [],
};

/** Whether an order in `from` may move to `to`. */
export function canOrderMove(from: OrderStatus, to: OrderStatus): boolean {
  return ORDER_TRANSITIONS[from].includes(to);
}

/** A successful sale: counted once in the link's `successful_sales` (a refund does not decrement). */
export const isSuccessfulSale = (status: OrderStatus) => status === 'approved' || status === 'paid';

/** Σ(amount × quantity, absent quantity = 1) + shipping_amount, in the link's minor units. */
export function orderTotal(link: Pick<PaymentLinkRow, 'products' | 'shippingAmount'>): number {
  return link.products.reduce((sum, p) => sum + p.amount * (p.quantity ?? 1), 0) + link.shippingAmount;
}

/** `<order_prefix of the first product that has one, else ORDER>-<6-digit sequence of the link>`. */
export function referenceCode(link: Pick<PaymentLinkRow, 'products'>, sequence: number): string {
  const prefix = link.products.find((p) => p.order_prefix)?.order_prefix ?? 'ORDER';
  return `${prefix}-${String(sequence).padStart(6, '0')}`;
}

export interface NewOrder {
  sellerId: string;
  linkId: string;
  customer: Schemas['OrderCustomer'];
  /** Contact and address of the recipient; kept when the link asks for delivery or charges shipping. */
  shipping?: Omit<Schemas['OrderShipping'], 'shipping_amount'>;
  checkoutId?: string;
  /** The first history entry's description (how the payment was submitted). */
  description?: string;
  at?: Date;
}

/** The seller's link, locked for the order change at `at` (now by default); 404 when it has no such link. */
async function lockedLink(tx: Queryable, p: { sellerId: string; linkId: string; at?: Date }) {
  const repository = paymentLinkRepository(tx);
  const at = p.at ?? new Date();
  const link = await repository.findPaymentLink(p.sellerId, p.linkId, at, { forUpdate: true });
  if (!link) throw PAYMENT_LINK_NOT_FOUND();
  return { repository, at, link };
}

/** Creates a `pending` order on an ACTIVE link of the seller, priced now. */
export async function createOrder(tx: Queryable, input: NewOrder): Promise<OrderRow> {
  const { repository, at, link } = await lockedLink(tx, input);
  if (link.status !== 'ACTIVE') throw new ApiError(422, 'payment_link_not_active', `The payment link is ${link.status} and takes no payments`);
  const { address, ...contact } = input.shipping ?? {};
  const shipping =
    link.requestDeliveryAddress || link.shippingAmount > 0
      ? { ...contact, shipping_amount: link.shippingAmount, ...(link.requestDeliveryAddress && address ? { address } : {}) }
      : null;
  const order: OrderRow = {
    orderId: randomUUID(),
    linkId: link.linkId,
    currency: link.currency,
    amount: orderTotal(link),
    referenceCode: referenceCode(link, (await repository.countOrders(link.linkId)) + 1),
    checkoutId: input.checkoutId ?? randomUUID(),
    customer: input.customer,
    shipping,
    status: 'pending',
    history: [{ status: 'pending', ...(input.description ? { description: input.description } : {}), created_at: at.toISOString() }],
    createdAt: at,
    updatedAt: at,
  };
  await repository.insertOrder(order);
  return order;
}

export interface OrderStatusChange {
  sellerId: string;
  linkId: string;
  orderId: string;
  status: OrderStatus;
  description?: string;
  at?: Date;
}

/** Moves an order along ORDER_TRANSITIONS, appends its history entry, and counts a successful sale. */
export async function updateOrderStatus(tx: Queryable, change: OrderStatusChange): Promise<OrderRow> {
  const { repository, at, link } = await lockedLink(tx, change);
  const order = await repository.findOrder(link.linkId, change.orderId, { forUpdate: true });
  if (!order) throw new ApiError(404, 'order_not_found', 'Order not found');
  if (!canOrderMove(order.status, change.status)) {
    throw new ApiError(409, 'invalid_order_transition', `An order cannot move from ${order.status} to ${change.status}`);
  }
  const history = [...order.history, { status: change.status, ...(change.description ? { description: change.description } : {}), created_at: at.toISOString() }];
  await repository.updateOrderStatus(order.orderId, change.status, history, at);
  if (isSuccessfulSale(change.status)) await repository.addSuccessfulSale(link.linkId, at);
  return { ...order, status: change.status, history, updatedAt: at };
}
