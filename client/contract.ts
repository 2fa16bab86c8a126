// Which contract operation a request is for, from the contract package's generated operation table
// (`@payment-platform/contract/operations`): the client decides from the contract itself which
// calls carry the access token and which go to the token host, without reading a bundle at run time.
import { operations, type ContractOperation } from '@payment-platform/contract/operations';

/** One operation of the contract as the client routes it. */
export interface Route extends ContractOperation {
  /** Matches a URL path that ends with the template (a `baseUrl` may carry a prefix). */
  pattern: RegExp;
  /** Literal path segments: the most literal match wins (`by-short-id/x` over `{link_id}/...`). */
  literals: number;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function routeOf(operation: ContractOperation): Route {
  const segments = operation.path.split('/').filter(Boolean);
  const source = segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : escapeRegExp(s))).join('/');
  return { ...operation, pattern: new RegExp(`/${source}/?$`), literals: segments.filter((s) => !s.startsWith('{')).length };
}

let routes: Route[] | undefined;

/** Every operation of the contract, the most literal paths first. */
export function platformRoutes(): Route[] {
  routes ??= operations.map(routeOf).sort((a, b) => b.literals - a.literals);
  return routes;
}

const recent = new Map<string, Route | undefined>();
const RECENT_LIMIT = 512;

/** The contract operation a request is for, from its method and URL path (the last paths seen are remembered). */
export function findRoute(method: string, pathname: string): Route | undefined {
  const key = `${method} ${pathname}`;
  const known = recent.get(key);
  if (known !== undefined || recent.has(key)) return known;
  const route = platformRoutes().find((r) => r.method === method && r.pattern.test(pathname));
  // Paths with ids are many: start again rather than grow without end.
  if (recent.size >= RECENT_LIMIT) recent.clear();
  recent.set(key, route);
  return route;
}
