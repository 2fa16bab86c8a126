// The three packages as other repositories get them: `npm pack` of each workspace (which builds
// it), installed from the tarballs into fresh projects (offline from the npm cache when it holds
// everything, else from the registry), and used there as a merchant would:
// - a client-only project: what it adds (at most 10 packages and 6 MB), and a CommonJS program
//   that require()s the client;
// - a merchant project with all three: a strict ESM TypeScript program type-checked against the
//   published declarations and run against the Prism mock of the published bundle, a merchant's
//   integration test on startSandbox, the `payment-platform-sandbox` command, and the compiled
//   server itself (what `make build-server` builds: `npm pack` runs the same build).
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, type Started } from '../support/processes.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const bin = (name: string) => join(root, 'node_modules/.bin', name);
const fixture = (name: string) => new URL(`fixtures/${name}`, import.meta.url).pathname;
const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
// Every type-check below leaves out TypeScript's own lib.*.d.ts (lib.dom.d.ts, lib.es2022.d.ts, …):
// they are TypeScript's files, not the packages', and checking them again cost ~1–2 s of CPU per
// check. With skipLibCheck off the packages' declarations (and @types/node) are still checked, as
// test/consumer/fixtures/tsconfig.json does for the merchant project.
const NOT_TYPESCRIPTS_OWN_LIBS = { skipDefaultLibCheck: true } as const;
const typesNode = JSON.parse(readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8')).version;

const WORKSPACES = { contract: 'generated', client: 'client', sandbox: 'server' } as const;
type Name = keyof typeof WORKSPACES;

let work: string;
const tarballs = {} as Record<Name, string>;

async function install(project: string, packages: string[]): Promise<'offline' | 'registry'> {
  try {
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...packages], { cwd: project, env });
    return 'offline';
  } catch {
    // A dependency missing from the npm cache: the registry is reachable, so install normally.
    await run('npm', ['install', '--no-audit', '--no-fund', ...packages], { cwd: project, env });
    return 'registry';
  }
}

function project(name: string, type: 'module' | 'commonjs'): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type }));
  return dir;
}

/** Packages under node_modules (scoped ones counted one by one) and their size on disk. */
function footprint(dir: string): { packages: number; bytes: number } {
  let packages = 0;
  let bytes = 0;
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else bytes += statSync(full).size;
    }
  };
  const modules = join(dir, 'node_modules');
  for (const entry of readdirSync(modules, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const names = entry.name.startsWith('@') ? readdirSync(join(modules, entry.name)).map((n) => `${entry.name}/${n}`) : [entry.name];
    for (const name of names) {
      packages += 1;
      walk(join(modules, name));
    }
  }
  return { packages, bytes };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'platform-packages-'));
  for (const [name, workspace] of Object.entries(WORKSPACES) as Array<[Name, string]>) {
    const { stdout } = await run('npm', ['pack', '--workspace', workspace, '--pack-destination', work], { cwd: root, env });
    tarballs[name] = join(work, stdout.trim().split('\n').at(-1)!);
  }
}, 180_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed tarballs', () => {
  const contents = async (name: Name) => (await run('tar', ['-tzf', tarballs[name]])).stdout.trim().split('\n').map((f) => f.replace(/^package\//, ''));

  it('contract: the bundles, the types, the operation table and the compiled check, nothing else', async () => {
    const files = await contents('contract');
    expect(files.filter((f) => !/^([\w-]+\.openapi\.(yaml|json)|(platform|operations|checkout-notification|money)\.(js|d\.ts)|package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(f))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['platform.openapi.yaml', 'platform.openapi.json', 'web-checkout.openapi.json', 'platform.d.ts', 'platform.js', 'operations.js', 'LICENSE', 'README.md']));
  });

  it('client: dist/ only, no test or source files', async () => {
    const files = await contents('client');
    expect(files.filter((f) => !/^(dist\/.+\.(js|d\.ts)|package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(f))).toEqual([]);
  });

  it('sandbox: dist/ (with the migrated PGlite snapshot), the migrations and the HTML reference', async () => {
    const files = await contents('sandbox');
    expect(files.filter((f) => !/^(dist\/.+\.(js|d\.ts)|dist\/pglite-snapshot\.(tar|json)|store\/migrations\/\d{3}_\w+\.sql|docs\/index\.html|acquirer\/README\.md|package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(f))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['dist/main.js', 'dist/index.js', 'dist/index.d.ts', 'dist/pglite-snapshot.tar', 'acquirer/README.md']));
    // The build's own snapshot writer stays out: the package ships the snapshot it wrote.
    expect(files.filter((f) => /snapshot-writer|write-pglite-snapshot/.test(f))).toEqual([]);
  });
});

describe('a client-only install', () => {
  let dir: string;
  beforeAll(async () => {
    dir = project('client-only', 'commonjs');
    await install(dir, [tarballs.contract, tarballs.client]);
  }, 120_000);

  it('adds at most 10 packages and 6 MB', () => {
    const { packages, bytes } = footprint(dir);
    console.info(`client-only install: ${packages} packages, ${(bytes / 1024 / 1024).toFixed(2)} MB`);
    expect(packages).toBeLessThanOrEqual(10);
    expect(bytes).toBeLessThanOrEqual(6 * 1024 * 1024);
  });

  it("type-checks in a browser project: the DOM's types, no Node types, skipLibCheck off", async () => {
    // Before Node's types are installed (the next test adds them): the declarations must not need them.
    expect(existsSync(join(dir, 'node_modules/@types/node'))).toBe(false);
    writeFileSync(
      join(dir, 'browser.ts'),
      [
        "import { createPlatformClient, checkoutNotificationHandler, checkoutNotificationReceiver } from '@payment-platform/client';",
        "import { formatMoney } from '@payment-platform/client/money';",
        "const client = createPlatformClient({ baseUrl: 'https://sandbox.example', clientId: 'a', clientSecret: 'b' });",
        "// @ts-expect-error: no such operation in the contract (unused if the types were lost to any)",
        "void client.GET('/no/such/path');",
        "const handler: (request: Request) => Promise<Response> = checkoutNotificationHandler({ credentials: { user: 'u', password: 'p' }, onNotification: () => {} });",
        "export const used = [handler, checkoutNotificationReceiver, formatMoney];",
      ].join('\n'),
    );
    const options = { target: 'es2022', lib: ['es2022', 'dom'], module: 'esnext', moduleResolution: 'bundler', strict: true, noEmit: true, skipLibCheck: false, ...NOT_TYPESCRIPTS_OWN_LIBS, types: [] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, include: ['browser.ts'] }));
    const checked = await run(bin('tsc'), ['-p', '.'], { cwd: dir, env }).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
    expect(checked).not.toHaveProperty('failed');
  }, 60_000);

  it('is required from a CommonJS program, type-checked with module nodenext', async () => {
    // After the footprint was measured: a TypeScript consumer adds Node's types (`types: ["node"]`).
    await install(dir, [`@types/node@${typesNode}`]);
    copyFileSync(fixture('require-client.cts.txt'), join(dir, 'require-client.cts'));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', strict: true, outDir: 'out', skipLibCheck: false, ...NOT_TYPESCRIPTS_OWN_LIBS, types: ['node'] }, include: ['require-client.cts'] }));
    const checked = await run(bin('tsc'), ['-p', '.'], { cwd: dir, env }).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
    expect(checked).not.toHaveProperty('failed');
    const { stdout } = await run(process.execPath, ['--no-warnings', join(dir, 'out/require-client.cjs')], { cwd: dir, env });
    expect(JSON.parse(stdout)).toEqual({ client: 'function', money: '$150' });
  }, 60_000);
});

describe('a client-only install type-checked with moduleResolution node10', () => {
  it("resolves every package's types (a wrong call is an error, not any) with and without skipLibCheck", async () => {
    const dir = project('client-node10', 'commonjs');
    await install(dir, [tarballs.contract, tarballs.client, `@types/node@${typesNode}`]);
    writeFileSync(
      join(dir, 'node10.ts'),
      [
        "import { createPlatformClient } from '@payment-platform/client';",
        "import { checkoutNotificationHandler } from '@payment-platform/client/webhooks';",
        "import { formatMoney } from '@payment-platform/client/money';",
        "import type { components } from '@payment-platform/contract/types';",
        "import { checkCheckoutNotification } from '@payment-platform/contract/checkout-notification';",
        "import { operations } from '@payment-platform/contract';",
        "const client = createPlatformClient({ baseUrl: 'http://127.0.0.1:1', clientId: 'a', clientSecret: 'b' });",
        "// @ts-expect-error: no such operation in the contract (unused if the types were lost to any)",
        "void client.GET('/no/such/path');",
        "const status: components['schemas']['PlanStatus'] = 'active';",
        "// @ts-expect-error: not a status",
        "const wrong: components['schemas']['PlanStatus'] = 'open';",
        "export const used = [status, wrong, checkoutNotificationHandler, formatMoney, checkCheckoutNotification, operations.length];",
      ].join('\n'),
    );
    for (const skipLibCheck of [true, false]) {
      const options = { module: 'commonjs', moduleResolution: 'node10', strict: true, noEmit: true, skipLibCheck, ...NOT_TYPESCRIPTS_OWN_LIBS, types: ['node'] };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, include: ['node10.ts'] }));
      const checked = await run(bin('tsc'), ['-p', '.'], { cwd: dir, env }).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
      expect(checked, `skipLibCheck ${skipLibCheck}: ${checked.stdout}`).not.toHaveProperty('failed');
    }
  }, 120_000);
});

describe('a merchant project with the three packages', () => {
  let dir: string;
  let prism: Started | undefined;
  beforeAll(async () => {
    dir = project('merchant', 'module');
    for (const file of ['sample.ts', 'merchant.ts', 'require-client.cts']) copyFileSync(fixture(`${file}.txt`), join(dir, file));
    copyFileSync(fixture('tsconfig.json'), join(dir, 'tsconfig.json'));
    await install(dir, [tarballs.contract, tarballs.client, tarballs.sandbox, `@types/node@${typesNode}`]);
  }, 180_000);
  afterAll(() => prism?.stop());

  it('type-checks the merchant programs strictly against the published declarations', async () => {
    await expect(run(bin('tsc'), ['-p', '.'], { cwd: dir, env })).resolves.toBeDefined();
  }, 60_000);

  it("resolves the types-only entry at run time too (what `import { type paths }` becomes under verbatimModuleSyntax)", async () => {
    const code = "import '@payment-platform/contract/types'; const types = await import('@payment-platform/contract/types'); console.log(JSON.stringify(Object.keys(types)));";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: dir, env });
    expect(JSON.parse(stdout)).toEqual([]);
  });

  it('runs a program against the Prism mock of the published bundle', async () => {
    const port = await freePort();
    prism = await startProcess(bin('prism'), ['mock', join(dir, 'node_modules/@payment-platform/contract/platform.openapi.yaml'), '--host', '127.0.0.1', '--port', String(port)], /Prism is listening/);
    const { stdout } = await run(bin('tsx'), ['sample.ts'], { cwd: dir, env: { ...env, PLATFORM_URL: `http://127.0.0.1:${port}` } });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
      seller: expect.any(String),
      link: 'ACTIVE',
      redirect: expect.stringMatching(/^http/),
      refused: 'validation_error',
      clp: '$150',
      brl: 259.8,
      delivered: [200, 'Authorized'],
      wrongCredentials: 'invalid_credentials',
      bundle: true,
    });
  }, 60_000);

  it('runs the merchant integration test on startSandbox: pay, webhook, billing, reset', async () => {
    const { stdout } = await run(bin('tsx'), ['merchant.ts'], { cwd: dir, env, timeout: 90_000 });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
      webhookHelper: [200, 401, 'recurring'],
      seller: 'Café da Montanha',
      token: [200, 'Bearer'],
      redirect: true,
      notification: ['Authorized', true],
      links: [5, 2, true, 5],
      charges: ['expired', 12],
      afterReset: [404, 0],
    });
  }, 120_000);

  it('starts with `npx --no -- payment-platform-sandbox --port 0` as the READMEs write it, and answers', async () => {
    // Offline through npm's environment, so that the command is the READMEs' word for word (an
    // option between `--no` and the name hid that npx took the sandbox's options as its own).
    const npx = { ...env, npm_config_offline: 'true' };
    const started = await startProcess('npx', ['--no', '--', 'payment-platform-sandbox', '--port', '0', '--data-dir', 'memory://'], /listening on (http:\/\/\S+)/, { cwd: dir, env: { ...npx, LOG_LEVEL: 'warn' } });
    try {
      const url = /listening on (http:\/\/\S+)/.exec(started.output())![1]!;
      expect(started.output()).toContain('demo client:  demo-seller-client / demo-seller-secret');
      expect(started.output()).toContain('admin token:  sandbox-admin-token');
      const jwks = await fetch(`${url}/sandbox/v1/jwks`);
      expect(jwks.status).toBe(200);
      expect((await jwks.json()).keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256' });
      const help = await run('npx', ['--no', '--', 'payment-platform-sandbox', '--help'], { cwd: dir, env: npx });
      expect(help.stdout).toMatch(/--port[\s\S]*--data-dir[\s\S]*--database-url/);
      const version = await run('npx', ['--no', '--', 'payment-platform-sandbox', '--version'], { cwd: dir, env: npx });
      expect(version.stdout.trim()).toBe(`@payment-platform/sandbox ${JSON.parse(readFileSync(join(root, 'server/package.json'), 'utf8')).version}`);
    } finally {
      await started.stop();
    }
  }, 60_000);

  // The compiled sandbox as installed: `npm pack` built it with `npm run build` (tsc -p
  // server/tsconfig.build.json), as `make build-server` builds what `make run` starts. tsc emits it as
  // ESM whose relative imports are `.js`, and `node <dist>/main.js` starts from it alone, finding the
  // files it does not emit (the SQL migrations) in its package and the contract bundle in the
  // contract package.
  describe("the installed sandbox's compiled server", () => {
    let out: string;
    let server: Started;
    let url: string;
    beforeAll(async () => {
      out = join(dir, 'node_modules/@payment-platform/sandbox/dist');
      const port = await freePort();
      // Started from elsewhere, with every path left to its default: nothing depends on the cwd.
      server = await startProcess(process.execPath, [join(out, 'main.js')], /listening on http:\/\/\S+/, {
        cwd: work,
        env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: 'memory://', DATABASE_URL: '', API_SPEC: '', LOG_LEVEL: 'warn' },
      });
      url = `http://127.0.0.1:${port}`;
    }, 60_000);
    afterAll(() => server?.stop());

    // What tsc emitted, before the package's `files` list picks from it: server/dist, which `npm pack` built above.
    it('is JavaScript only, with .js relative imports, dynamic ones included', async () => {
      const built = join(root, 'server/dist');
      const entries = readdirSync(built, { recursive: true, withFileTypes: true });
      const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name));
      expect(files).toContain(join(built, 'main.js'));
      expect(files).toContain(join(built, 'index.d.ts'));
      expect(files).toContain(join(built, 'store', 'write-pglite-snapshot.js')); // the build's own step, left out of the package
      expect(files.filter((f) => !f.endsWith('.js') && !f.endsWith('.d.ts') && !/\/pglite-snapshot\.(tar|json)$/.test(f))).toEqual([]);
      const wrongSpecifiers: string[] = [];
      for (const file of files.filter((f) => f.endsWith('.js'))) {
        const source = readFileSync(file, 'utf8');
        for (const m of source.matchAll(/(?:from\s*|import\s*\(\s*)["'](\.{1,2}\/[^"']*)["']/g)) {
          if (!m[1]!.endsWith('.js')) wrongSpecifiers.push(`${file}: ${m[1]}`);
          // The sandbox imports the contract as a package, never the client or generated/ by path.
          if (/(^|\/)(client|generated)\//.test(m[1]!)) wrongSpecifiers.push(`${file}: ${m[1]}`);
        }
      }
      expect(wrongSpecifiers).toEqual([]);
      const store = readFileSync(join(out, 'store', 'open-store.js'), 'utf8');
      expect(store).toContain('from "./pglite-worker-store.js"');
      // PGlite's worker thread is started from its own file, next to the store that starts it, in the package too.
      expect(existsSync(join(out, 'store', 'pglite-worker.js'))).toBe(true);
      expect(store).toContain('import("./postgres-store.js")'); // the PostgreSQL driver loads only when used
    });

    it('starts with node: migrates, seeds the demo seller, serves the key set and issues tokens', async () => {
      expect(server.output()).toContain(`listening on ${url}`);
      const res = await fetch(`${url}/sandbox/v1/jwks`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await res.json()).keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256', use: 'sig' });
      const form = { grant_type: 'client_credentials', client_id: 'demo-seller-client', client_secret: 'demo-seller-secret', scope: 'digital-plataform:gateway-api' };
      const token = await fetch(`${url}/authentication/oauth2/-core/access_token`, { method: 'POST', body: new URLSearchParams(form) });
      expect(token.status).toBe(200);
      expect((await token.json()).token_type).toBe('Bearer');
    });

    it('still enforces the contract: a path outside it is a 404 in its area shape', async () => {
      const res = await fetch(`${url}/dpy/web-checkout/v1/unknown`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ code: 'not_found', message: 'Not found', details: [] });
    });

    it('opens its PGlite thread, from its own snapshot, in a process started with --input-type=module -e (a worker inherits that option)', async () => {
      const code = `
        const { openPgliteWorkerStore } = await import(${JSON.stringify(join(out, 'store', 'pglite-worker-store.js'))});
        const store = await openPgliteWorkerStore(undefined, { snapshot: true });
        console.log((await store.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n > 0);
        await store.close();
      `;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: work, env, timeout: 60_000 });
      expect(stdout.trim()).toBe('true');
    }, 70_000);

    it('exits 0 on SIGTERM', async () => {
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      server.child.kill('SIGTERM');
      expect(await exited).toBe(0);
    });
  });
});
