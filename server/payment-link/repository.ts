// SQL of the payment link area: sellers (read), business configurations, product images, payment
// links and their orders. Every value travels as a parameter; a link's status is always read
// through payment_link_status_at (migration 002) at the instant the caller gives.
import type { Queryable } from '../store/store.ts';
import type { CountryCode, PaymentMethodKey, PaymentMethods } from './payment-methods.ts';
import type { components } from '../http/contract.ts';

type Schemas = components['schemas'];
export type LinkStatus = 'ACTIVE' | 'INACTIVE' | 'EXPIRED';
export type OrderStatus = Schemas['OrderStatus'];
export type LinkProduct = Schemas['PaymentLinkProduct'];

export interface SellerRow {
  sellerId: string;
  merchantId: string;
  sellerCode: string;
  tradeName: string;
  email: string;
  country: CountryCode;
  currencies: string[];
  services: Schemas['SellerServices'];
  payments: PaymentMethods;
  tenant: string;
}

export interface BusinessConfigurationRow {
  expiration: Date | null;
  maxOrders: number | null;
  requestDeliveryAddress: boolean;
  payment: PaymentMethods;
  currency: string;
}

export interface PaymentLinkRow {
  linkId: string;
  shortId: string;
  sellerId: string;
  /** The seller's country: it decides which methods an answer shows enabled. */
  country: CountryCode;
  label: string;
  expiration: Date | null;
  maxOrders: number | null;
  type: 'custom' | 'unique';
  successfulSales: number;
  requestDeliveryAddress: boolean;
  shippingAmount: number;
  products: LinkProduct[];
  payment: PaymentMethods;
  /** Evaluated at the instant of the read (payment_link_status_at). */
  status: LinkStatus;
  currency: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewPaymentLink {
  linkId: string;
  shortId: string;
  sellerId: string;
  label: string;
  expiration: Date | null;
  maxOrders: number | null;
  type: 'custom' | 'unique';
  requestDeliveryAddress: boolean;
  shippingAmount: number;
  products: LinkProduct[];
  payment: PaymentMethods;
  currency: string;
  labelFolded: string;
  productTitlesFolded: string[];
  createdAt: Date;
}

export interface ProductImageRow {
  imageId: string;
  contentType: 'image/png' | 'image/jpeg' | 'image/webp';
  sizeBytes: number;
  createdAt: Date;
}

export interface OrderHistoryEntry {
  status: OrderStatus;
  description?: string;
  created_at: string;
}

export interface OrderRow {
  orderId: string;
  linkId: string;
  currency: string;
  amount: number;
  referenceCode: string;
  checkoutId: string;
  customer: Schemas['OrderCustomer'];
  shipping: Schemas['OrderShipping'] | null;
  status: OrderStatus;
  history: OrderHistoryEntry[];
  createdAt: Date;
  updatedAt: Date;
}

export type LinkSort = 'created_at' | 'updated_at' | 'expiration' | 'label' | 'status' | 'successful_sales';

/** What the list filters on, already checked (service.ts). Dates are instants. */
export interface LinkListFilter {
  status?: LinkStatus;
  paymentType?: PaymentMethodKey;
  createdAtStart?: Date;
  createdAtEnd?: Date;
  expirationStart?: Date;
  expirationEnd?: Date;
  /** Case-folded already (foldCase). */
  titleFolded?: string;
}

export interface LinkListPage {
  sort: LinkSort;
  direction: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const STATUS_AT = (at: string) => `payment_link_status_at(l.status, l.expiration, l.successful_sales, l.max_orders, ${at}::timestamptz)`;

/** The only columns the list may sort by: the `sort` value picks one, never builds one. */
const SORT_EXPRESSIONS: Record<LinkSort, string> = {
  created_at: 'l.created_at',
  updated_at: 'l.updated_at',
  expiration: 'l.expiration',
  label: 'l.label_folded COLLATE "C"', // code point order of the case-folded label
  status: `${STATUS_AT('$1')} COLLATE "C"`,
  successful_sales: 'l.successful_sales',
};

const LINK_COLUMNS = (at: string) => `
  l.link_id AS "linkId", l.short_id AS "shortId", l.seller_id AS "sellerId", s.country,
  l.label, l.expiration, l.max_orders AS "maxOrders", l.type, l.successful_sales AS "successfulSales",
  l.request_delivery_address AS "requestDeliveryAddress", l.shipping_amount AS "shippingAmount",
  l.products, l.payment, ${STATUS_AT(at)} AS status, l.currency,
  l.created_at AS "createdAt", l.updated_at AS "updatedAt"`;

/** bigint columns arrive as strings from `pg`. */
const link = (row: PaymentLinkRow): PaymentLinkRow => ({ ...row, shippingAmount: Number(row.shippingAmount) });
const order = (row: OrderRow): OrderRow => ({ ...row, amount: Number(row.amount) });

const ORDER_COLUMNS = `
  order_id AS "orderId", link_id AS "linkId", currency, amount, reference_code AS "referenceCode",
  checkout_id AS "checkoutId", customer, shipping, status, history, created_at AS "createdAt", updated_at AS "updatedAt"`;

export function paymentLinkRepository(db: Queryable) {
  return {
    async findSeller(sellerId: string): Promise<SellerRow | undefined> {
      const { rows } = await db.query<SellerRow>(
        `SELECT seller_id AS "sellerId", merchant_id AS "merchantId", seller_code AS "sellerCode",
                trade_name AS "tradeName", email, country, currencies, services, payments, tenant
           FROM sellers WHERE seller_id = $1`,
        [sellerId],
      );
      return rows[0];
    },

    async findBusinessConfiguration(sellerId: string): Promise<BusinessConfigurationRow | undefined> {
      const { rows } = await db.query<BusinessConfigurationRow>(
        `SELECT expiration, max_orders AS "maxOrders", request_delivery_address AS "requestDeliveryAddress", payment, currency
           FROM business_configurations WHERE seller_id = $1`,
        [sellerId],
      );
      return rows[0];
    },

    /** Saves the seller's defaults unless some are saved already (the demo seller is created at every start). */
    async insertBusinessConfiguration(sellerId: string, config: BusinessConfigurationRow): Promise<void> {
      await db.query(
        `INSERT INTO business_configurations (seller_id, expiration, max_orders, request_delivery_address, payment, currency)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (seller_id) DO NOTHING`,
        [sellerId, config.expiration?.toISOString() ?? null, config.maxOrders, config.requestDeliveryAddress, JSON.stringify(config.payment), config.currency],
      );
    },

    /** The image's metadata and the SHA-256 of its bytes, not the bytes (migration 011). */
    async insertProductImage(image: ProductImageRow & { sellerId: string; contentSha256: string }): Promise<void> {
      await db.query(
        `INSERT INTO product_images (image_id, seller_id, content_type, size_bytes, content_sha256, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
        [image.imageId, image.sellerId, image.contentType, image.sizeBytes, image.contentSha256, image.createdAt.toISOString()],
      );
    },

    /** The ids among `imageIds` that are images of this seller. */
    async sellerImageIds(sellerId: string, imageIds: string[]): Promise<Set<string>> {
      if (imageIds.length === 0) return new Set();
      const { rows } = await db.query<{ imageId: string }>(
        `SELECT image_id AS "imageId" FROM product_images WHERE seller_id = $1 AND image_id = ANY($2::uuid[])`,
        [sellerId, imageIds],
      );
      return new Set(rows.map((r) => r.imageId));
    },

    /** False when the short id is taken (the caller draws another one). */
    async insertPaymentLink(l: NewPaymentLink): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO payment_links (link_id, short_id, seller_id, label, expiration, max_orders, type, successful_sales,
                                    request_delivery_address, shipping_amount, products, payment, status, currency,
                                    label_folded, product_titles_folded, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, $10, $11, 'ACTIVE', $12, $13, $14, $15, $15)
         ON CONFLICT (short_id) DO NOTHING`,
        [
          l.linkId, l.shortId, l.sellerId, l.label, l.expiration?.toISOString() ?? null, l.maxOrders, l.type,
          l.requestDeliveryAddress, l.shippingAmount, JSON.stringify(l.products), JSON.stringify(l.payment), l.currency,
          l.labelFolded, l.productTitlesFolded, l.createdAt.toISOString(),
        ],
      );
      return rowCount === 1;
    },

    /** A link of this seller (another seller's link is not found). `forUpdate` locks it for the transaction. */
    async findPaymentLink(sellerId: string, linkId: string, at: Date, options: { forUpdate?: boolean } = {}): Promise<PaymentLinkRow | undefined> {
      const { rows } = await db.query<PaymentLinkRow>(
        `SELECT ${LINK_COLUMNS('$1')} FROM payment_links l JOIN sellers s ON s.seller_id = l.seller_id
          WHERE l.seller_id = $2 AND l.link_id = $3 ${options.forUpdate ? 'FOR UPDATE OF l' : ''}`,
        [at.toISOString(), sellerId, linkId],
      );
      return rows[0] && link(rows[0]);
    },

    /** Public lookup: exact, case-sensitive, any seller. */
    async findPaymentLinkByShortId(shortId: string, at: Date): Promise<PaymentLinkRow | undefined> {
      const { rows } = await db.query<PaymentLinkRow>(
        `SELECT ${LINK_COLUMNS('$1')} FROM payment_links l JOIN sellers s ON s.seller_id = l.seller_id WHERE l.short_id = $2`,
        [at.toISOString(), shortId],
      );
      return rows[0] && link(rows[0]);
    },

    /** One page of the seller's links matching the filter, and how many match in all. */
    async listPaymentLinks(sellerId: string, filter: LinkListFilter, page: LinkListPage, at: Date): Promise<{ links: PaymentLinkRow[]; total: number }> {
      const params: unknown[] = [at.toISOString(), sellerId];
      const param = (value: unknown) => {
        params.push(value);
        return `$${params.length}`;
      };
      const where = ['l.seller_id = $2'];
      if (filter.status) where.push(`${STATUS_AT('$1')} = ${param(filter.status)}::text`);
      if (filter.paymentType) where.push(`(l.payment -> ${param(filter.paymentType)}::text ->> 'enabled') = 'true'`);
      if (filter.createdAtStart) where.push(`l.created_at >= ${param(filter.createdAtStart.toISOString())}::timestamptz`);
      if (filter.createdAtEnd) where.push(`l.created_at < ${param(filter.createdAtEnd.toISOString())}::timestamptz`);
      if (filter.expirationStart) where.push(`l.expiration >= ${param(filter.expirationStart.toISOString())}::timestamptz`);
      if (filter.expirationEnd) where.push(`l.expiration < ${param(filter.expirationEnd.toISOString())}::timestamptz`);
      if (filter.titleFolded !== undefined) {
        const title = param(filter.titleFolded);
        // strpos, not LIKE: `%` and `_` are literal characters of the filter.
        where.push(`(strpos(l.label_folded, ${title}::text) > 0 OR EXISTS (SELECT 1 FROM unnest(l.product_titles_folded) t WHERE strpos(t, ${title}::text) > 0))`);
      }
      const from = `FROM payment_links l JOIN sellers s ON s.seller_id = l.seller_id WHERE ${where.join(' AND ')}`;
      const direction = page.direction === 'asc' ? 'ASC' : 'DESC';
      // One statement for the page and the total (a window count over the filtered links); only a
      // page past the end, which has no row to carry the total, needs a count of its own.
      // Links without expiration sort last whatever the direction; ties by link_id ascending.
      const { rows } = await db.query<PaymentLinkRow & { total: number }>(
        `SELECT ${LINK_COLUMNS('$1')}, count(*) OVER ()::integer AS total ${from}
          ORDER BY ${SORT_EXPRESSIONS[page.sort]} ${direction} NULLS LAST, l.link_id ASC
          LIMIT ${param(page.limit)}::integer OFFSET ${param(page.offset)}::bigint`,
        params,
      );
      if (rows.length === 0) {
        // $1 (the instant) is named even when no filter reads it, so that every parameter has a type.
        const counted = await db.query<{ total: number }>(`SELECT count(*)::integer AS total, max($1::timestamptz) AS at ${from}`, params.slice(0, -2));
        return { links: [], total: counted.rows[0]?.total ?? 0 };
      }
      const total = rows[0]!.total;
      return { links: rows.map(({ total: _total, ...row }) => link(row)), total };
    },

    /** Counts one more successful sale (an order reached approved or paid). */
    async addSuccessfulSale(linkId: string, at: Date): Promise<void> {
      await db.query(`UPDATE payment_links SET successful_sales = successful_sales + 1, updated_at = $2 WHERE link_id = $1`, [linkId, at.toISOString()]);
    },

    async countOrders(linkId: string): Promise<number> {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM payment_link_orders WHERE link_id = $1`, [linkId]);
      return rows[0]?.n ?? 0;
    },

    async insertOrder(o: OrderRow): Promise<void> {
      await db.query(
        `INSERT INTO payment_link_orders (order_id, link_id, currency, amount, reference_code, checkout_id, customer, shipping, status, history, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          o.orderId, o.linkId, o.currency, o.amount, o.referenceCode, o.checkoutId, JSON.stringify(o.customer),
          o.shipping === null ? null : JSON.stringify(o.shipping), o.status, JSON.stringify(o.history), o.createdAt.toISOString(), o.updatedAt.toISOString(),
        ],
      );
    },

    /** An order of this link; `forUpdate` locks it for the transaction. */
    async findOrder(linkId: string, orderId: string, options: { forUpdate?: boolean } = {}): Promise<OrderRow | undefined> {
      const { rows } = await db.query<OrderRow>(
        `SELECT ${ORDER_COLUMNS} FROM payment_link_orders WHERE link_id = $1 AND order_id = $2 ${options.forUpdate ? 'FOR UPDATE' : ''}`,
        [linkId, orderId],
      );
      return rows[0] && order(rows[0]);
    },

    async updateOrderStatus(orderId: string, status: OrderStatus, history: OrderHistoryEntry[], at: Date): Promise<void> {
      await db.query(`UPDATE payment_link_orders SET status = $2, history = $3, updated_at = $4 WHERE order_id = $1`, [
        orderId,
        status,
        JSON.stringify(history),
        at.toISOString(),
      ]);
    },
  };
}

export type PaymentLinkRepository = ReturnType<typeof paymentLinkRepository>;
