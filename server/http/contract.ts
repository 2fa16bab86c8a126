// The contract's generated types (openapi-typescript, `make generate`). Handlers are typed from
// these, so a response body that does not match its operation does not compile.
export type { paths, components, operations, webhooks } from '@payment-platform/contract/types';

/** The enforced bundle as parsed data (what the validator and the security decision read). */
export interface PlatformDocument {
  paths: Record<string, Record<string, any>>;
  webhooks?: Record<string, Record<string, any>>;
  components: Record<string, Record<string, any>>;
}

import type { webhooks } from '@payment-platform/contract/types';

/** The payload of the checkout notification webhook. */
export type CheckoutNotification = webhooks['checkout-notification']['post']['requestBody']['content']['application/json'];
