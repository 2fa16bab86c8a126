// What a merchant's compiler sees: `data` and `error` typed per operation from the contract, the
// area error shapes reachable without casts, and the shape guards narrowing unknown values.
import { describe, expectTypeOf, it } from 'vitest';
import {
  checkoutNotificationHandler,
  createPlatformClient,
  dataOrThrow,
  type PaymentLinkPage,
  type PlatformApiError,
  isPaymentLinkError,
  isRecurrenceError,
  isWebCheckoutError,
  productImageUpload,
  type components,
  type PaymentLinkError,
  type RecurrenceError,
  type WebCheckoutError,
} from '../../client/index.ts';

type Schemas = components['schemas'];
// Types only: nothing is sent (no fetch happens until a call is awaited in a test).
const client = createPlatformClient({ baseUrl: 'http://127.0.0.1:9', clientId: 'id', clientSecret: 'secret' });
type ResultOf<T extends (...args: any) => Promise<any>> = Awaited<ReturnType<T>>;
/**
 * Each assignable to the other. For a schema holding an object and a union together (the payment
 * methods and their at-least-one-enabled rule), openapi-fetch's answer type is that schema written
 * another way, which toEqualTypeOf's structural brand tells apart.
 */
type Equivalent<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe('types of the platform client', () => {
  it('types each area error from the contract', () => {
    const paymentLink = () => client.GET('/dpy/payment-link/v1/payment-links/by-short-id/{short_id}', { params: { path: { short_id: 'x' } } });
    expectTypeOf<NonNullable<ResultOf<typeof paymentLink>['error']>>().toEqualTypeOf<PaymentLinkError>();
    expectTypeOf<Equivalent<NonNullable<ResultOf<typeof paymentLink>['data']>, Schemas['PaymentLink']>>().toEqualTypeOf<true>();

    const intent = () => client.POST('/dpy/web-checkout/v1/payment-intent', { body: {} as Schemas['PaymentIntentRequest'] });
    type IntentError = NonNullable<ResultOf<typeof intent>['error']>;
    // The plain-text 401 is part of it: a string, next to the object shapes.
    expectTypeOf<Extract<IntentError, string>>().toEqualTypeOf<string>();
    expectTypeOf<IntentError>().toExtend<WebCheckoutError>();

    const subscription = () => client.GET('/rpy/be-subscription/v1/subscriptions/{subscription_id}', { params: { path: { subscription_id: 'x' } } });
    expectTypeOf<NonNullable<ResultOf<typeof subscription>['error']>>().toEqualTypeOf<RecurrenceError>();

    const plan = () => client.PATCH('/rpy/be-plan/v1/plans/{plan_id}/status/{status}', { params: { path: { plan_id: 'x', status: 'inactive' } } });
    expectTypeOf<NonNullable<ResultOf<typeof plan>['error']>>().toExtend<RecurrenceError>();
  });

  it("reads a seller's payment methods: the methods and their at-least-one-enabled rule are one type, not a union", () => {
    type Payments = NonNullable<Schemas['Seller']['payments']>;
    expectTypeOf<NonNullable<Payments['credit']>>().toExtend<Schemas['CreditPaymentMethod']>();
    expectTypeOf<NonNullable<Payments['credit']>['brands']>().toEqualTypeOf<Schemas['CreditPaymentMethod']['brands']>();
    expectTypeOf<NonNullable<Payments['c2p_master']>['enabled']>().toEqualTypeOf<boolean>();
    // Built for a request as the contract package's README says: `as const`, checked with `satisfies`.
    const payment = { credit: { enabled: true }, debit: { enabled: false } } as const satisfies Schemas['PaymentMethodsConfiguration'];
    expectTypeOf(payment.credit.enabled).toEqualTypeOf<true>();
  });

  it('narrows unknown values with the guards', () => {
    const value: unknown = undefined;
    if (isPaymentLinkError(value)) expectTypeOf(value.error_code).toBeString();
    if (isWebCheckoutError(value)) expectTypeOf(value).toEqualTypeOf<WebCheckoutError>();
    if (isRecurrenceError(value)) expectTypeOf(value.status_code).toEqualTypeOf<number | undefined>();
  });

  it('uploads a product image through a typed call', () => {
    const upload = () => client.POST('/dpy/payment-link/v1/payment-links/products/images', productImageUpload(new Blob(['x']), 'photo.png'));
    expectTypeOf<NonNullable<ResultOf<typeof upload>['data']>>().toEqualTypeOf<Schemas['ProductImage']>();
  });

  it('types the per-call options, the failure of an answer and the pagination helpers', () => {
    const seller = () => client.GET('/dpy/payment-link/v1/sellers', { signal: new AbortController().signal, timeoutMs: 1_000, maxRetries: 0 });
    type Result = ResultOf<typeof seller>;
    expectTypeOf<NonNullable<Result['failure']>>().toEqualTypeOf<PlatformApiError<PaymentLinkError>>();
    expectTypeOf<Equivalent<ReturnType<typeof dataOrThrow<Result>>, Schemas['Seller']>>().toEqualTypeOf<true>();
    // @ts-expect-error: timeoutMs is a number of milliseconds
    void (() => client.GET('/dpy/payment-link/v1/sellers', { timeoutMs: '1s' }));
    // @ts-expect-error: maxRetries is a number
    void (() => client.GET('/dpy/payment-link/v1/sellers', { maxRetries: true }));
    // Still a required body where the contract requires one.
    // @ts-expect-error: body is missing
    void (() => client.POST('/dpy/web-checkout/v1/payment-intent', { timeoutMs: 5 }));
    // A misspelt query parameter does not compile (client README); a misspelt body field does.
    // @ts-expect-error: `stauts` is not a query parameter of listPaymentLinks
    void (() => client.GET('/dpy/payment-link/v1/payment-links', { params: { query: { stauts: 'ACTIVE' } } }));
    void (() => client.PATCH('/dpy/web-checkout/v1/technical-configurations', { body: { success_url: 'https://shop.example/ok', bogus_field: 1 } }));
    expectTypeOf(client.listPaymentLinks).returns.toEqualTypeOf<Promise<PaymentLinkPage>>();
    expectTypeOf<ResultOf<typeof client.listPaymentLinks>['links'][number]>().toEqualTypeOf<Schemas['PaymentLink']>();
    // A Fetch API handler is a Next.js route handler.
    const POST: (request: Request) => Promise<Response> = checkoutNotificationHandler({ credentials: { user: 'u', password: 'p' }, onNotification: () => {} });
    void POST;
  });
});
