// Requests built from the contract's own examples, as parts (path, query and header parameters, body)
// that any caller can assemble: the typed client's `params`/`body`, or a plain URL and RequestInit.
// Same approach as the Prism mock test: each parameter's example, the first named body example, and
// demo credentials for the schemes the caller itself must send.
import { deref, examplesOf, parametersOf, type OpenApiDocument, type Operation } from './contract.ts';

export interface ExampleRequest {
  path: Record<string, string>;
  /** Required query parameters only: the optional ones have defaults. */
  query: Record<string, string>;
  /** Required header parameters (e.g. the plan call's `Content-Type`). */
  header: Record<string, string>;
  mediaType?: string;
  /** JSON value, form fields, or a FormData for `multipart/form-data`. */
  body?: unknown;
}

export const DEMO_BASIC = { user: 'demo-user', password: 'demo-password' };
export const DEMO_BEARER = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJkZW1vIn0.c2ln';

export function exampleValue(doc: OpenApiDocument, param: any): string {
  const [, value] = examplesOf(doc, param)[0] ?? [];
  if (value !== undefined) return String(value);
  const schema = deref(doc, param.schema ?? {});
  if (schema.examples?.length) return String(schema.examples[0]);
  if (schema.enum?.length) return String(schema.enum[0]);
  throw new Error(`parameter ${param.name} has no example`);
}

export function exampleRequest(doc: OpenApiDocument, op: Operation): ExampleRequest {
  const out: ExampleRequest = { path: {}, query: {}, header: {} };
  for (const param of parametersOf(doc, op)) {
    if (param.in === 'path') out.path[param.name] = exampleValue(doc, param);
    if (param.in === 'query' && param.required) out.query[param.name] = exampleValue(doc, param);
    if (param.in === 'header' && param.required) out.header[param.name] = exampleValue(doc, param);
  }
  const content = deref(doc, op.operation.requestBody ?? {}).content ?? {};
  const [mediaType, media] = Object.entries<any>(content)[0] ?? [];
  if (!mediaType) return out;
  out.mediaType = mediaType;
  if (mediaType === 'multipart/form-data') {
    const form = new FormData();
    for (const [name, prop] of Object.entries<any>(deref(doc, media.schema).properties ?? {})) {
      if (prop.format === 'binary' || prop.contentMediaType) {
        form.set(name, new Blob([Buffer.from('89504e470d0a1a0a', 'hex')], { type: 'image/png' }), 'product.png');
      }
    }
    out.body = form;
  } else {
    out.body = examplesOf(doc, media)[0]?.[1];
  }
  return out;
}

/** The security schemes an operation asks for, by type (`oauth2`, `http:basic`, `http:bearer`). */
export function securityKinds(doc: OpenApiDocument, op: Operation): string[] {
  const requirements: Array<Record<string, string[]>> = op.operation.security ?? doc.security ?? [];
  return requirements.flatMap((r) =>
    Object.keys(r).map((name) => {
      const scheme = deref(doc, doc.components.securitySchemes?.[name]);
      return scheme.type === 'http' ? `http:${scheme.scheme}` : scheme.type;
    }),
  );
}

/**
 * Headers for the schemes a caller sends itself (HTTP Basic, a plain bearer such as the sandbox
 * administration token); none for `oauth2`, whose token the platform client adds.
 */
export function callerCredentialHeaders(doc: OpenApiDocument, op: Operation): Record<string, string> {
  const kinds = securityKinds(doc, op);
  if (kinds.includes('http:basic')) {
    return { authorization: `Basic ${Buffer.from(`${DEMO_BASIC.user}:${DEMO_BASIC.password}`).toString('base64')}` };
  }
  if (kinds.includes('http:bearer')) return { authorization: `Bearer ${DEMO_BEARER}` };
  return {};
}
