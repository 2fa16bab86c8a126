// The contract's generated types (openapi-typescript, `make generate`). Handlers are typed from
// these, so a response body that does not match its operation does not compile.
export type { paths, components, operations, webhooks } from '../../generated/platform.ts';

/** The enforced bundle as parsed data (what the validator and the security decision read). */
export interface PlatformDocument {
  paths: Record<string, Record<string, any>>;
  webhooks?: Record<string, Record<string, any>>;
  components: Record<string, Record<string, any>>;
}
