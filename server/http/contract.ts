// The contract's generated types (openapi-typescript, `make generate`). Handlers are typed from
// these, so a response body that does not match its operation does not compile.
export type { paths, components, operations, webhooks } from '../../generated/platform.ts';
// Before generated/platform.ts existed, a development copy of one area stood here:
//   export type { paths, components, operations, webhooks } from '/tmp/auth-types.ts';
