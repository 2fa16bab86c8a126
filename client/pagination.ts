// The payment link list, page by page: `listPaymentLinks` answers one page with the total of links
// matching the filters (`X-Total-Count`), `allPaymentLinks` iterates over every link of every page
// and stops exactly at that total (no request for an empty page after the last one).
import type { components, operations } from '@payment-platform/contract/types';
import { PlatformError } from './errors.ts';
import type { CallOptions } from './transport.ts';

/** The filters, sort and paging of `GET /dpy/payment-link/v1/payment-links`, typed from the contract. */
/** The query of `listPaymentLinks`; each member may be given as `undefined` (its default). */
export type PaymentLinkQuery = { [K in keyof ListQuery]?: ListQuery[K] | undefined };
type ListQuery = NonNullable<operations['listPaymentLinks']['parameters']['query']>;

/** The filters and sort of the iterator (it does the paging; `limit` is its page size, default 100). */
export type PaymentLinkFilters = Omit<PaymentLinkQuery, 'page'>;

export type PaymentLink = components['schemas']['PaymentLink'];

/** One page of links. */
export interface PaymentLinkPage {
  links: PaymentLink[];
  /** Links matching the filters, before paging (`X-Total-Count`). */
  total: number;
  /** The page number (1-based) and the page size asked, with the contract's defaults (1 and 10). */
  page: number;
  limit: number;
  /** More links follow this page. */
  hasMore: boolean;
}

export interface PaymentLinkPages {
  /** One page of the seller's links and the total; throws a `PlatformApiError` on a non-2xx answer. */
  listPaymentLinks(query?: PaymentLinkQuery, options?: CallOptions): Promise<PaymentLinkPage>;
  /**
   * Every link matching the filters, page after page (`limit` per request, default 100, the
   * contract's maximum), stopping at `X-Total-Count`. `options` apply to each page request.
   */
  allPaymentLinks(filters?: PaymentLinkFilters, options?: CallOptions): AsyncGenerator<PaymentLink, void, undefined>;
}

const DEFAULT_PAGE = 1;
const DEFAULT_LIMIT = 10;
const ITERATOR_LIMIT = 100;

type ListCall = (
  path: '/dpy/payment-link/v1/payment-links',
  init: { params: { query: PaymentLinkQuery } } & CallOptions,
) => Promise<{ data?: PaymentLink[]; response: Response; failure?: Error }>;

export function paymentLinkPages(client: { GET: unknown }): PaymentLinkPages {
  const get = client.GET as ListCall;

  async function listPaymentLinks(query: PaymentLinkQuery = {}, options: CallOptions = {}): Promise<PaymentLinkPage> {
    const result = await get('/dpy/payment-link/v1/payment-links', { ...options, params: { query } });
    if (result.failure) throw result.failure;
    const header = result.response.headers.get('x-total-count');
    const total = header !== null && /^\d+$/.test(header.trim()) ? Number(header) : undefined;
    const links = result.data ?? [];
    if (total === undefined || !Array.isArray(links)) {
      throw new PlatformError(
        { operationId: 'listPaymentLinks', status: result.response.status, code: 'invalid_answer', platformMessage: undefined },
        'listPaymentLinks answered without a list and a numeric X-Total-Count header',
      );
    }
    const page = query.page ?? DEFAULT_PAGE;
    const limit = query.limit ?? DEFAULT_LIMIT;
    return { links, total, page, limit, hasMore: (page - 1) * limit + links.length < total };
  }

  async function* allPaymentLinks(filters: PaymentLinkFilters = {}, options: CallOptions = {}): AsyncGenerator<PaymentLink, void, undefined> {
    const limit = filters.limit ?? ITERATOR_LIMIT;
    // Links received count towards the total, links yielded are each yielded once: an insertion that
    // shifts a link onto the next page does not yield it twice, and a server that ignores `page`
    // (every page the same) ends at the total having yielded each link once.
    let received = 0;
    const yielded = new Set<string>();
    for (let page = 1; ; page++) {
      const answer = await listPaymentLinks({ ...filters, limit, page }, options);
      for (const link of answer.links) {
        // Never past the total, even if a page answers more than it counts.
        if (received >= answer.total) return;
        received += 1;
        if (link.link_id !== undefined) {
          if (yielded.has(link.link_id)) continue;
          yielded.add(link.link_id);
        }
        yield link;
      }
      // Done at the total, or at a short or empty page (links removed while iterating).
      if (received >= answer.total || answer.links.length < limit) return;
    }
  }

  return { listPaymentLinks, allPaymentLinks };
}
