// The package as another repo gets it: `npm pack` (which builds dist/), installed from the tarball
// into a fresh project (offline, from the npm cache, when the cache has everything), a merchant's
// sample program type-checked strictly against the published declarations, then run against the
// Prism mock of the published bundle.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, type Started } from '../support/processes.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const bin = (name: string) => join(root, 'node_modules/.bin', name);
const fixture = (name: string) => new URL(`consumer/${name}`, import.meta.url).pathname;
const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

let work: string;
let project: string;
let tarball: string;
let prism: Started | undefined;
let prismUrl: string;
let installedOffline = false;

async function install(packages: string[]): Promise<void> {
  try {
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...packages], { cwd: project, env });
    installedOffline = true;
  } catch {
    // A dependency missing from the npm cache: the registry is reachable, so install normally.
    await run('npm', ['install', '--no-audit', '--no-fund', ...packages], { cwd: project, env });
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'platform-package-'));
  project = join(work, 'merchant');
  const startPrism = (async () => {
    const port = await freePort();
    prism = await startProcess(bin('prism'), ['mock', join(root, 'generated/platform.openapi.yaml'), '--host', '127.0.0.1', '--port', String(port)], /Prism is listening/);
    prismUrl = `http://127.0.0.1:${port}`;
  })();
  const { stdout } = await run('npm', ['pack', '--pack-destination', work], { cwd: root, env });
  tarball = join(work, stdout.trim().split('\n').at(-1)!);
  await run('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'merchant-sample', private: true, type: 'module' }));
  copyFileSync(fixture('sample.ts.txt'), join(project, 'sample.ts'));
  copyFileSync(fixture('tsconfig.json'), join(project, 'tsconfig.json'));
  const typesNode = JSON.parse(readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8')).version;
  await install([tarball, `@types/node@${typesNode}`]);
  await startPrism;
}, 90_000);

afterAll(async () => {
  await prism?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the published package', () => {
  it('holds only what consumers need: dist/, the bundles, the READMEs', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n').map((f) => f.replace(/^package\//, ''));
    const outside = files.filter((f) => !/^(dist\/(client|generated)\/.+\.(js|d\.ts)|generated\/[\w-]+\.openapi\.yaml|generated\/platform\.openapi\.json|README\.md|client\/README\.md|package\.json)$/.test(f));
    expect(outside).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['dist/client/index.js', 'dist/client/index.d.ts', 'dist/generated/platform.d.ts', 'generated/platform.openapi.yaml', 'generated/platform.openapi.json', 'client/README.md']));
  });

  it('installs from the tarball (offline from the npm cache when it can)', () => {
    const installed = JSON.parse(readFileSync(join(project, 'node_modules/@payment-platform/contract/package.json'), 'utf8'));
    expect(installed.name).toBe('@payment-platform/contract');
    console.info(`package test: installed ${installedOffline ? 'offline from the npm cache' : 'from the registry'}`);
  });

  it('type-checks a merchant program strictly against the published declarations', async () => {
    await expect(run(bin('tsc'), ['-p', '.'], { cwd: project, env })).resolves.toBeDefined();
  }, 30_000);

  it('runs the merchant program against the Prism mock', async () => {
    const { stdout } = await run(bin('tsx'), ['sample.ts'], { cwd: project, env: { ...env, PLATFORM_URL: prismUrl } });
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
  }, 30_000);
});
