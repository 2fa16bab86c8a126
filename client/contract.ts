// The joined platform bundle, read at run time: the client decides from the contract itself which
// calls carry the access token and which go to the token host, and the webhook verifier validates
// against the contract's own schema, so neither can drift from the joined bundle (its JSON form,
// `generated/platform.openapi.json`, written by `make generate` beside the YAML).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLE = join('generated', 'platform.openapi.json');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface PlatformDocument {
  paths: Record<string, Record<string, any>>;
  webhooks: Record<string, Record<string, any>>;
  components: Record<string, Record<string, any>>;
}

/** One operation of the contract as the client needs it. */
export interface Route {
  method: string;
  /** The path key, e.g. `/dpy/payment-link/v1/payment-links/{link_id}/orders/{order_id}`. */
  template: string;
  operationId: string;
  /** The operation's security asks for the platform's OAuth 2.0 access token. */
  bearer: boolean;
  /** `auth`: the path's `servers` use `{auth_url}` (the token endpoints); `platform` otherwise. */
  host: 'platform' | 'auth';
  /** Matches a URL path that ends with the template (a `baseUrl` may carry a prefix). */
  pattern: RegExp;
  /** Matches exactly the template's paths (a server routing its own requests). */
  exact: RegExp;
  /** Names of the security schemes of the operation's first requirement (`[]` when public). */
  schemes: string[];
  /** Literal path segments: the most literal match wins (`by-short-id/x` over `{link_id}/...`). */
  literals: number;
}

// Source (client/) and build (dist/client/) sit at different depths under the package root.
function bundlePath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, BUNDLE);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`${BUNDLE} not found above ${fileURLToPath(import.meta.url)}`);
}

let document: PlatformDocument | undefined;

/** The parsed bundle (its JSON form, generated beside the YAML), read once per process on first need. */
export function platformDocument(): PlatformDocument {
  document ??= JSON.parse(readFileSync(bundlePath(), 'utf8')) as PlatformDocument;
  return document;
}

function usesOAuth2(doc: PlatformDocument, requirements: Array<Record<string, string[]>> | undefined): boolean {
  // No requirement, or an empty one (`{}`: anonymous allowed), means no token is sent.
  if (!requirements?.length || requirements.some((r) => Object.keys(r).length === 0)) return false;
  const schemes = doc.components.securitySchemes ?? {};
  return requirements.some((r) => Object.keys(r).some((name) => schemes[name]?.type === 'oauth2'));
}

function hostOf(servers: Array<{ url: string }> | undefined): Route['host'] {
  return servers?.some((s) => s.url.includes('{auth_url}')) ? 'auth' : 'platform';
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every operation of a contract document, the most literal paths first. */
export function routesOf(doc: PlatformDocument): Route[] {
  const out: Route[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const segments = template.split('/').filter(Boolean);
      const source = segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : escapeRegExp(s))).join('/');
      const security: Array<Record<string, string[]>> = operation.security ?? (doc as any).security ?? [];
      out.push({
        method: method.toUpperCase(),
        template,
        operationId: operation.operationId,
        bearer: usesOAuth2(doc, security),
        host: hostOf(operation.servers ?? item.servers),
        pattern: new RegExp(`/${source}/?$`),
        exact: new RegExp(`^/${source}/?$`),
        schemes: Object.keys(security[0] ?? {}),
        literals: segments.filter((s) => !s.startsWith('{')).length,
      });
    }
  }
  return out.sort((a, b) => b.literals - a.literals);
}

let routes: Route[] | undefined;

export function platformRoutes(): Route[] {
  routes ??= routesOf(platformDocument());
  return routes;
}

/** The contract operation a request is for, from its method and URL path. */
export function findRoute(method: string, pathname: string): Route | undefined {
  return platformRoutes().find((r) => r.method === method && r.pattern.test(pathname));
}
