// The compiled sandbox (`make build-server`, what `make run` starts and the package's bin): tsc
// emits it as ESM whose relative imports are `.js`, and `node <out>/main.js` starts from it alone,
// finding the files it does not emit (the SQL migrations) in its package and the contract bundle
// in the contract package.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, startProcess, type Started } from '../support/processes.ts';
import { tokenForm } from './support/server.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const BUILD_TIMEOUT_MS = 90_000;

let out: string;
let server: Started;
let url: string;
beforeAll(async () => {
  // A directory of its own (suites run at once, and `make build` writes server/dist), inside the
  // sandbox package as server/dist is: the build finds its package root by walking up to package.json.
  await mkdir(join(ROOT, 'server', '.test-builds'), { recursive: true });
  out = await mkdtemp(join(ROOT, 'server', '.test-builds', 'build-'));
  await promisify(execFile)(process.execPath, [`${ROOT}node_modules/typescript/bin/tsc`, '-p', 'server/tsconfig.build.json', '--outDir', out], {
    cwd: ROOT,
    timeout: BUILD_TIMEOUT_MS,
  });
  const port = await freePort();
  // Started from elsewhere, with every path left to its default: nothing depends on the cwd.
  server = await startProcess(process.execPath, [join(out, 'main.js')], /listening on http:\/\/\S+/, {
    cwd: out,
    env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: 'memory://', DATABASE_URL: '', API_SPEC: '', LOG_LEVEL: 'warn' },
  });
  url = `http://127.0.0.1:${port}`;
}, BUILD_TIMEOUT_MS + 60_000);
afterAll(async () => {
  await server?.stop();
  if (out) await rm(out, { recursive: true, force: true });
});

async function emittedFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name));
}

describe('the compiled server', () => {
  it('is JavaScript only, with .js relative imports, dynamic ones included', async () => {
    const files = await emittedFiles(out);
    expect(files.some((f) => f === join(out, 'main.js'))).toBe(true);
    expect(files.some((f) => f === join(out, 'index.d.ts'))).toBe(true);
    expect(files.filter((f) => !f.endsWith('.js') && !f.endsWith('.d.ts'))).toEqual([]);
    const tsSpecifiers: string[] = [];
    for (const file of files.filter((f) => f.endsWith('.js'))) {
      const source = await readFile(file, 'utf8');
      for (const m of source.matchAll(/(?:from\s*|import\s*\(\s*)["'](\.{1,2}\/[^"']*)["']/g)) {
        if (!m[1]!.endsWith('.js')) tsSpecifiers.push(`${file}: ${m[1]}`);
        // The sandbox imports the contract as a package, never the client or generated/ by path.
        if (/(^|\/)(client|generated)\//.test(m[1]!)) tsSpecifiers.push(`${file}: ${m[1]}`);
      }
    }
    expect(tsSpecifiers).toEqual([]);
    const store = await readFile(join(out, 'store', 'open-store.js'), 'utf8');
    expect(store).toContain('from "./pglite-worker-store.js"');
    // PGlite's worker thread is started from its own file, next to the store that starts it.
    expect(files).toContain(join(out, 'store', 'pglite-worker.js'));
    expect(store).toContain('import("./postgres-store.js")'); // the PostgreSQL driver loads only when used
  });

  it('starts with node: migrates, seeds the demo seller and serves the key set', async () => {
    expect(server.output()).toContain(`listening on ${url}`);
    const res = await fetch(`${url}/sandbox/v1/jwks`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const jwks = await res.json();
    expect(jwks.keys.length).toBeGreaterThan(0);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256', use: 'sig' });

    const token = await fetch(`${url}/authentication/oauth2/-core/access_token`, { method: 'POST', body: new URLSearchParams(tokenForm()) });
    expect(token.status).toBe(200);
    expect((await token.json()).token_type).toBe('Bearer');
  });

  it('still enforces the contract: a path outside it is a 404 in its area shape', async () => {
    const res = await fetch(`${url}/dpy/web-checkout/v1/unknown`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'not_found', message: 'Not found', details: [] });
  });

  it('opens its PGlite thread in a process started with --input-type=module -e (a worker inherits that option)', async () => {
    const code = `
      const { openPgliteWorkerStore } = await import(${JSON.stringify(join(out, 'store', 'pglite-worker-store.js'))});
      const store = await openPgliteWorkerStore(undefined, { snapshot: ${JSON.stringify(inject('pgliteClusterSnapshot'))} });
      console.log((await store.query('SELECT 41 + 1 AS n')).rows[0].n);
      await store.close();
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, timeout: 60_000 });
    expect(stdout.trim()).toBe('42');
  }, 70_000);

  it('exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
