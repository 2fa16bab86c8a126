// The joined bundle as the common JavaScript OpenAPI toolchain reads it: swagger-parser (under much
// of that tooling), @seriousme/openapi-schema-validator (the OpenAPI 3.1 JSON schema, strictly), and a
// second client generator (@hey-api/openapi-ts) whose output type-checks under strict settings.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createClient } from '@hey-api/openapi-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const BUNDLES = ['generated/platform.openapi.yaml', 'generated/platform.openapi.json'];

describe('YAML loaders that follow YAML 1.1 (js-yaml load, PyYAML safe_load)', () => {
  it('read every YAML bundle as its JSON twin: no example date becomes a date, no `yes` a boolean', async () => {
    const names = (await readdir(join(root, 'generated'))).filter((name) => name.endsWith('.openapi.yaml'));
    expect(names).toHaveLength(8);
    for (const name of names) {
      const asYaml11 = parseYaml(await readFile(join(root, 'generated', name), 'utf8'), { version: '1.1' });
      const json = JSON.parse(await readFile(join(root, 'generated', name.replace(/\.yaml$/, '.json')), 'utf8'));
      expect(asYaml11, name).toEqual(json);
    }
  });
});

describe('swagger-parser', () => {
  for (const bundle of BUNDLES) {
    it(`validates ${bundle}`, async () => {
      const api: any = await SwaggerParser.validate(join(root, bundle));
      expect(api.openapi).toBe('3.1.0');
      expect(Object.keys(api.paths).length).toBeGreaterThan(15);
    });
  }
});

describe('@seriousme/openapi-schema-validator', () => {
  for (const bundle of BUNDLES) {
    it(`finds ${bundle} valid against the OpenAPI 3.1 schema`, async () => {
      const validator = new Validator();
      const result = await validator.validate(join(root, bundle));
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    });
  }
});

describe('a second client generator (@hey-api/openapi-ts)', () => {
  let dir: string;
  let out: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(root, 'node_modules', '.toolchain-'));
    out = join(dir, 'client');
    await createClient({
      input: join(root, 'generated/platform.openapi.json'),
      output: { path: out },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
      logs: { level: 'silent' },
    });
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('generates an SDK with every operation', async () => {
    const sdk = await readFile(join(out, 'sdk.gen.ts'), 'utf8');
    for (const op of ['issueAccessToken', 'listPaymentLinks', 'createPaymentIntent', 'createSubscription']) {
      expect(sdk).toMatch(new RegExp(`export const ${op}\\b`));
    }
  });

  it('writes no control character into the generated sources', async () => {
    for (const file of await readdir(out, { recursive: true })) {
      if (!file.endsWith('.ts')) continue;
      const text = await readFile(join(out, file), 'utf8');
      // eslint-disable-next-line no-control-regex
      expect(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(text), file).toBe(false);
    }
  });

  it('keeps the hosts as variables: the token host is the caller\'s to pass (see README)', async () => {
    const types = await readFile(join(out, 'types.gen.ts'), 'utf8');
    expect(types).toContain('{base_url}');
    expect(types).toContain('{auth_url}');
  });

  it('keeps a field\'s own rules beside Text in its zod schemas (README, "Zod generators")', async () => {
    const zodOut = join(dir, 'zod');
    await createClient({
      input: join(root, 'generated/platform.openapi.json'),
      output: { path: zodOut },
      plugins: ['@hey-api/typescript', 'zod'],
      logs: { level: 'silent' },
    });
    const zod = await readFile(join(zodOut, 'zod.gen.ts'), 'utf8');
    const update = zod.slice(zod.indexOf('export const zTechnicalConfigurationUpdate '));
    const field = (name: string) => update.match(new RegExp(`\\b${name}: (.*),?\\n`))?.[1];
    // Both rules: Text's (no control characters) and the URL's own scheme and length.
    expect(field('success_url')).toBe('zText.and(z.url().max(2048).regex(/^https?:\\/\\//)).optional(),');
    expect(zod).toMatch(/zPaymentIntentPayment = [^;]*amount: zMinorUnitAmount\.and\(z\.int\(\)\.gte\(1\)\.lte\(2147483647\)\)/s);
  }, 120_000);

  it('type-checks strictly', async () => {
    const tsconfig = join(dir, 'tsconfig.json');
    await writeFile(tsconfig, JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        noImplicitOverride: true,
        noImplicitReturns: true,
        noEmit: true,
        skipLibCheck: false,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: [],
      },
      include: ['client/**/*.ts'],
    }));
    const tsc = join(root, 'node_modules', '.bin', 'tsc');
    const result = await run(tsc, ['-p', tsconfig], { cwd: dir }).catch((error) => error);
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).toBe('');
  }, 120_000);
});
