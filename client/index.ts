// The package's entry point: the typed client, the error shapes of each area, the money helpers and
// the merchant's webhook helpers. The contract's types are at `@payment-platform/contract/types`.
export { createPlatformClient, dataOrThrow, type PlatformClient, type PlatformClientOptions, type PlatformResponse } from './client.ts';
export type { RequestObservation, RequestObserver, Fetch, CallOptions } from './transport.ts';
export type { PaymentLink, PaymentLinkFilters, PaymentLinkPage, PaymentLinkPages, PaymentLinkQuery } from './pagination.ts';
export { CONTRACT_IDEMPOTENT, DEFAULT_MAX_RETRIES, isSafeToRetry, RETRIED_STATUSES, retryAfterMs } from './retry.ts';
export { TokenEndpointError, isTokenEndpointError, DEFAULT_SCOPE, DEFAULT_TOKEN_SKEW_SECONDS, type TokenEndpointForm } from './token.ts';
export * from './errors.ts';
export * from './money.ts';
export { productImageUpload } from './product-image.ts';
export * from './webhooks/index.ts';
export type { paths, components, operations, webhooks } from '@payment-platform/contract/types';
