// The payment link list through the client: one page with its total, and an async iterator over
// every link of every page that stops exactly at X-Total-Count (no request for an empty page after
// the last one), with the contract's filters passed through.
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { createPlatformClient, PlatformApiError, type PaymentLink, type PaymentLinkFilters } from '../../client/index.ts';
import { makeLinks, startFlakyServer, type FlakyServer } from './flaky-server.ts';

const LIST = '/dpy/payment-link/v1/payment-links';
let platform: FlakyServer;
beforeEach(async () => {
  platform = await startFlakyServer();
});
afterEach(() => platform.close());

const clientFor = () => createPlatformClient({ baseUrl: platform.url, clientId: 'c', clientSecret: 's', retryBaseDelayMs: 1 });
const pages = () => platform.requests.filter((r) => r.path === LIST).map((r) => r.query);

async function collect(iterable: AsyncIterable<PaymentLink>): Promise<string[]> {
  const ids: string[] = [];
  for await (const link of iterable) ids.push(link.short_id ?? '');
  return ids;
}

describe('listPaymentLinks: one page and its total', () => {
  it('answers the page, the total, and whether more follow', async () => {
    platform.links = makeLinks(23);
    const client = clientFor();
    const second = await client.listPaymentLinks({ limit: 10, page: 2, sort: 'created_at', sort_type: 'desc' });
    expect(second).toMatchObject({ total: 23, page: 2, limit: 10, hasMore: true });
    expect(second.links.map((l) => l.short_id)).toEqual(makeLinks(23).slice(10, 20).map((l) => l.short_id));
    const third = await client.listPaymentLinks({ limit: 10, page: 3 });
    expect(third).toMatchObject({ total: 23, hasMore: false });
    expect(third.links).toHaveLength(3);
    expect(pages()).toEqual([
      { limit: '10', page: '2', sort: 'created_at', sort_type: 'desc' },
      { limit: '10', page: '3' },
    ]);
  });

  it('uses the contract defaults (page 1, 10 links) when none are given', async () => {
    platform.links = makeLinks(12);
    const first = await clientFor().listPaymentLinks();
    expect(first).toMatchObject({ total: 12, page: 1, limit: 10, hasMore: true });
    expect(first.links).toHaveLength(10);
    expect(pages()).toEqual([{}]);
  });

  it('throws the platform error of a refused page', async () => {
    platform.fail(LIST, { status: 422, body: { error_code: 'invalid_date_range', message: 'created_at_start must be before created_at_end', status_code: 422 } });
    const failure = await clientFor().listPaymentLinks({ created_at_start: '2026-05-01T00:00:00Z', created_at_end: '2026-04-01T00:00:00Z' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PlatformApiError);
    expect(failure).toMatchObject({ operationId: 'listPaymentLinks', status: 422, code: 'invalid_date_range' });
  });
});

describe('allPaymentLinks: every link of every page', () => {
  it('walks 23 links in pages of 10 and stops at the total', async () => {
    platform.links = makeLinks(23);
    expect(await collect(clientFor().allPaymentLinks({ limit: 10 }))).toEqual(makeLinks(23).map((l) => l.short_id));
    expect(pages().map((q) => [q.page, q.limit])).toEqual([
      ['1', '10'],
      ['2', '10'],
      ['3', '10'],
    ]);
  });

  it('asks for no empty page when the total is a multiple of the page size', async () => {
    platform.links = makeLinks(20);
    expect(await collect(clientFor().allPaymentLinks({ limit: 10 }))).toHaveLength(20);
    expect(pages()).toHaveLength(2);
  });

  it('makes one request for an empty list, and pages of 100 by default', async () => {
    expect(await collect(clientFor().allPaymentLinks())).toEqual([]);
    platform.links = makeLinks(150);
    expect(await collect(clientFor().allPaymentLinks())).toHaveLength(150);
    expect(pages().map((q) => [q.page, q.limit])).toEqual([
      ['1', '100'],
      ['1', '100'],
      ['2', '100'],
    ]);
  });

  it('passes the filters typed from the contract to every page', async () => {
    platform.links = makeLinks(30, (i) => (i % 3 === 0 ? 'INACTIVE' : 'ACTIVE'));
    const filters: PaymentLinkFilters = { status: 'INACTIVE', limit: 4, sort: 'label', sort_type: 'asc' };
    const ids = await collect(clientFor().allPaymentLinks(filters));
    expect(ids).toEqual(platform.links.filter((l) => l.status === 'INACTIVE').map((l) => l.short_id));
    expect(ids).toHaveLength(10);
    expect(pages().map((q) => q.page)).toEqual(['1', '2', '3']);
    expect(pages().every((q) => q.status === 'INACTIVE' && q.sort === 'label' && q.limit === '4')).toBe(true);
    expectTypeOf<PaymentLinkFilters['status']>().toEqualTypeOf<'ACTIVE' | 'INACTIVE' | 'EXPIRED' | undefined>();
    // @ts-expect-error: the iterator does the paging
    void clientFor().allPaymentLinks({ page: 2 });
  });

  it('retries a failed page (the list is a GET) and goes on', async () => {
    platform.links = makeLinks(15);
    platform.fail(LIST, { status: 503, retryAfter: '0' });
    expect(await collect(clientFor().allPaymentLinks({ limit: 10 }))).toHaveLength(15);
    expect(pages()).toHaveLength(3);
  });

  it('stops early when the caller breaks out, and throws a page failure', async () => {
    platform.links = makeLinks(25);
    const first: string[] = [];
    for await (const link of clientFor().allPaymentLinks({ limit: 10 })) {
      first.push(link.short_id ?? '');
      if (first.length === 12) break;
    }
    expect(first).toHaveLength(12);
    expect(pages()).toHaveLength(2);

    platform.requests.length = 0;
    platform.fail(LIST, 'drop');
    const failure = await collect(clientFor().allPaymentLinks({ limit: 10 }, { maxRetries: 0 })).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'ConnectionError', operationId: 'listPaymentLinks' });
  });
});
