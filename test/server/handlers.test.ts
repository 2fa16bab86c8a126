// Every operation of the joined bundle has exactly one handler in the reference server, and the
// server has no route the contract does not document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expressPath } from '../../server/http/typed-router.ts';
import { loadPlatform, operationsOf, PLATFORM_BUNDLE } from '../support/contract.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/** Routes registered in an Express app, through mounted routers: `METHOD /path` per registration. */
function registeredRoutes(stack: any[]): string[] {
  const out: string[] = [];
  for (const layer of stack) {
    if (layer.route) {
      for (const method of Object.keys(layer.route.methods)) out.push(`${method.toUpperCase()} ${layer.route.path}`);
    } else if (layer.handle?.stack) {
      out.push(...registeredRoutes(layer.handle.stack));
    }
  }
  return out;
}

describe('handlers of the reference server', () => {
  let server: TestServer;
  let routes: string[];
  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
    routes = registeredRoutes(server.app.router.stack);
  });
  afterAll(() => server?.close());

  const operations = operationsOf(loadPlatform()).map((op) => `${op.method.toUpperCase()} ${expressPath(op.path)}`);

  it.each(operations)('%s has exactly one handler', (operation) => {
    expect(routes.filter((r) => r === operation)).toHaveLength(1);
  });

  it('registers no route outside the contract', () => {
    const documented = new Set(operations);
    // The hosted pages (checkout, payment link pages) and /docs are HTML for people, not API operations;
    // each page's address also answers its other methods with a 405 page (`_ALL`).
    const pages = routes.filter((r) => /^(GET|POST|_ALL) \/(checkout|pay|docs)(\/|$)/.test(r));
    expect(routes.filter((r) => !documented.has(r) && !pages.includes(r))).toEqual([]);
  });
});
