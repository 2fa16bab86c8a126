// What express-openapi-validator no longer does when it is built (server/http/validator-start-up.ts):
// compile each referenced schema while preprocessing the contract, compile the OpenAPI
// meta-schema that `validateApiSpec: false` never uses, and bundle a document that is bundled already. Counted as compilations by the very Ajv the
// validator requires, against the validator's own code run on the same contract; the documents the
// preprocessing leaves (which the request and response validators compile from) must not change.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import {
  compileSpecValidatorLazily,
  isBundled,
  keepBundledDocuments,
  ORIGINAL,
  resolveValidatorSchemasByRegistry,
  validatorFrameworkModule,
  validatorSchemaPreprocessorModule,
  validatorSpecValidatorModule,
} from '../../server/http/validator-start-up.ts';
import { PLATFORM_JSON } from './support/server.ts';

const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
/** Ajv's core class: every flavour the validator uses (draft-07, 2019, 2020) inherits its compilation. */
const Ajv = validatorRequire('ajv/dist/core').default as { prototype: { _compileSchemaEnv: (...args: unknown[]) => unknown } };
const { OpenApiValidator } = validatorRequire('./openapi.validator.js') as { OpenApiValidator: new (options: unknown) => { ajvOpts: { preprocessor: unknown } } };

/** Runs `fn` and counts the schemas Ajv compiles meanwhile (each a validation function). */
function compilations(fn: () => void): number {
  const compile = Ajv.prototype._compileSchemaEnv;
  let count = 0;
  Ajv.prototype._compileSchemaEnv = function (...args) {
    count++;
    return compile.apply(this, args);
  };
  try {
    fn();
  } finally {
    Ajv.prototype._compileSchemaEnv = compile;
  }
  return count;
}

const contract = () => JSON.parse(readFileSync(PLATFORM_JSON, 'utf8'));
const preprocessor = validatorSchemaPreprocessorModule();
const specValidator = validatorSpecValidatorModule();
type Wrapped = { [ORIGINAL]?: unknown };
const installed = { resolveSchema: preprocessor.SchemaPreprocessor.prototype.resolveSchema, specValidator: specValidator.OpenAPISchemaValidator };

/** The validator's own behaviour: the wrappers taken off, whether or not an app of this worker installed them. */
function withoutWrappers() {
  const resolveSchema = preprocessor.SchemaPreprocessor.prototype.resolveSchema as Wrapped;
  if (resolveSchema[ORIGINAL]) preprocessor.SchemaPreprocessor.prototype.resolveSchema = resolveSchema[ORIGINAL] as typeof installed.resolveSchema;
  const spec = specValidator.OpenAPISchemaValidator as Wrapped;
  if (spec[ORIGINAL]) specValidator.OpenAPISchemaValidator = spec[ORIGINAL] as typeof installed.specValidator;
}
afterEach(() => {
  preprocessor.SchemaPreprocessor.prototype.resolveSchema = installed.resolveSchema;
  specValidator.OpenAPISchemaValidator = installed.specValidator;
});

/** The validator's preprocessing of a document (the contract by default), as OpenApiValidator.installMiddleware runs it. */
function preprocess(document: () => unknown = contract): { apiDoc: unknown; apiDocRes: unknown } {
  const { SchemaPreprocessor } = preprocessor as unknown as {
    SchemaPreprocessor: new (apiDoc: unknown, ajvOptions: unknown, responses: unknown) => { preProcess(): { apiDoc: unknown; apiDocRes: unknown } };
  };
  // The Ajv options the validator derives from the sandbox's own (http/contract-validator.ts).
  const { ajvOpts } = new OpenApiValidator({ apiSpec: document(), validateApiSpec: false, validateRequests: { allErrors: true }, validateResponses: {} });
  return new SchemaPreprocessor(document(), ajvOpts.preprocessor, {}).preProcess();
}

describe('preprocessing the contract', () => {
  it('compiles no schema with the wrapper, where the validator alone compiles every referenced one', () => {
    withoutWrappers();
    const alone = compilations(preprocess);
    resolveValidatorSchemasByRegistry(preprocessor);
    const wrapped = compilations(preprocess);
    expect(alone).toBeGreaterThan(50);
    expect(wrapped).toBe(0); // the contract has no discriminator, the one other thing preprocessing compiles
  });

  it('leaves the same request and response documents as the validator alone', () => {
    withoutWrappers();
    const alone = preprocess();
    resolveValidatorSchemasByRegistry(preprocessor);
    const wrapped = preprocess();
    expect(JSON.stringify(wrapped.apiDoc)).toBe(JSON.stringify(alone.apiDoc));
    expect(JSON.stringify(wrapped.apiDocRes)).toBe(JSON.stringify(alone.apiDocRes));
  });

  it('leaves the same documents as the validator alone on references this contract does not have', () => {
    // What a spec given in API_SPEC, or a consumer's own validator in the same process, may hold:
    // an alias with keywords beside its $ref (the preprocessor rewrites the component, Ajv keeps
    // the original), references into other components whose names hold `.`, `~` or `%`.
    const json = { 'application/json': { schema: { type: 'object' } } };
    const post = (body: unknown) => ({ post: { requestBody: body, responses: { '200': { description: 'ok' } } } });
    const tricky = () => ({
      openapi: '3.1.0',
      info: { title: 'references', version: '1' },
      paths: {
        '/strict': post({ content: { 'application/json': { schema: { $ref: '#/components/schemas/Strict' } } } }),
        '/dotted': post({ $ref: '#/components/requestBodies/body.v1' }),
        '/escaped': post({ $ref: '#/components/requestBodies/a~1b' }),
        '/percent': post({ $ref: '#/components/requestBodies/with%20space' }),
      },
      components: {
        schemas: {
          Base: { type: 'object', properties: { a: { type: 'string' } } },
          Strict: { $ref: '#/components/schemas/Base', required: ['a'] },
        },
        requestBodies: { 'body.v1': { content: json, required: true }, 'a/b': { content: json, required: true }, 'with space': { content: json, required: true } },
      },
    });
    withoutWrappers();
    const alone = preprocess(tricky);
    resolveValidatorSchemasByRegistry(preprocessor);
    const wrapped = preprocess(tricky);
    expect(JSON.stringify(wrapped.apiDoc)).toBe(JSON.stringify(alone.apiDoc));
    expect(JSON.stringify(wrapped.apiDocRes)).toBe(JSON.stringify(alone.apiDocRes));
    // The alias kept its own `required` (the request validator compiles it from here).
    expect(JSON.stringify(wrapped.apiDoc)).toContain('"required":["a"]');
  });
});

describe("the validator's OpenAPI meta-schema", () => {
  const invalid = { openapi: '3.1.0', paths: { '/a': { get: { responses: 'not an object' } } } };

  it('is compiled only when a document is validated, and then reports the same errors', () => {
    withoutWrappers();
    const Alone = specValidator.OpenAPISchemaValidator;
    let aloneErrors: unknown;
    expect(compilations(() => void (aloneErrors = new Alone({ version: '3.1.0', validateApiSpec: true }).validate(invalid).errors))).toBeGreaterThan(0);
    expect(compilations(() => new Alone({ version: '3.1.0', validateApiSpec: false }))).toBeGreaterThan(0); // the cost the wrapper removes

    compileSpecValidatorLazily(specValidator);
    const Lazy = specValidator.OpenAPISchemaValidator;
    expect(Lazy).not.toBe(Alone);
    let lazy!: InstanceType<typeof Lazy>;
    expect(compilations(() => void (lazy = new Lazy({ version: '3.1.0', validateApiSpec: false })))).toBe(0);
    const strict = new Lazy({ version: '3.1.0', validateApiSpec: true });
    expect(strict.validate(invalid).errors).toEqual(aloneErrors);
    expect((strict.validate(invalid).errors as unknown[]).length).toBeGreaterThan(0);
    expect(lazy.validate({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} }).errors).toEqual([]);
  });
});

describe('a document that is bundled already', () => {
  const framework = validatorFrameworkModule();
  const installedLoadSpec = framework.OpenAPIFramework.prototype.loadSpec;
  const original = (installedLoadSpec as Wrapped)[ORIGINAL] as typeof installedLoadSpec | undefined;
  afterEach(() => void (framework.OpenAPIFramework.prototype.loadSpec = installedLoadSpec));
  /** `loadSpec` as the validator alone has it, and as the wrapper has it. */
  const loaders = () => {
    framework.OpenAPIFramework.prototype.loadSpec = original ?? installedLoadSpec;
    const alone = framework.OpenAPIFramework.prototype.loadSpec;
    keepBundledDocuments(framework);
    const wrapped = framework.OpenAPIFramework.prototype.loadSpec;
    expect(wrapped).not.toBe(alone);
    return { alone: (spec: unknown, mode?: unknown) => alone.call({}, spec, mode), wrapped: (spec: unknown, mode?: unknown) => wrapped.call({}, spec, mode) };
  };
  const generated = readdirSync(new URL('../../generated/', import.meta.url)).filter((name) => name.endsWith('.openapi.json'));

  it('is the same document json-schema-ref-parser\'s bundle answers, on every generated bundle', async () => {
    expect(generated.length).toBeGreaterThan(5);
    const { alone, wrapped } = loaders();
    for (const name of generated) {
      const read = () => JSON.parse(readFileSync(new URL(`../../generated/${name}`, import.meta.url), 'utf8'));
      expect(isBundled(read()), name).toBe(true);
      const spec = read();
      expect(await wrapped(spec, { mode: 'bundle' })).toBe(spec); // as it is: no crawl, no copy
      expect(await wrapped(read(), { mode: 'bundle' }), name).toEqual(await alone(read(), { mode: 'bundle' }));
    }
  });

  it('goes to the original otherwise: other references, a dangling one, a root $id, the dereference mode, a file path', async () => {
    const { alone, wrapped } = loaders();
    const doc = (ref: unknown, extra: object = {}) => ({
      openapi: '3.1.0', info: { title: 't', version: '1' }, ...extra,
      paths: { '/a': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: ref } } } } } } } },
      components: { schemas: { A: { type: 'string' }, B: { $ref: '#/components/schemas/A' } } },
    });
    const settled = (p: Promise<unknown>) => p.then((value) => ({ value }), (error: Error) => ({ error: `${error.name}: ${error.message}` }));
    const cases = [
      doc('#/components/schemas/A'),
      doc('#/components/schemas/B'), // a reference to a reference: bundle points it to the end
      doc('#/paths/~1a/get/responses/200/description'), // not a component
      doc('#/components/schemas/Missing'), // dangling: the parser's error
      doc('#/components/schemas/A%20'), // escaped
      doc('#/components/schemas/A', { $id: 'https://example.test/spec' }),
      doc(42),
    ];
    expect(cases.map(isBundled)).toEqual([true, false, false, false, false, false, false]);
    for (const spec of cases) expect(await settled(wrapped(structuredClone(spec), { mode: 'bundle' }))).toEqual(await settled(alone(structuredClone(spec), { mode: 'bundle' })));
    expect((await settled(wrapped(doc('#/components/schemas/Missing'), { mode: 'bundle' }))) as object).toHaveProperty('error', expect.stringContaining('Missing'));
    // Dereferenced, the references are gone: the original did it, not the shortcut.
    const dereferenced = (await wrapped(doc('#/components/schemas/B'), { mode: 'dereference' })) as ReturnType<typeof doc>;
    expect(dereferenced.paths['/a'].get.responses['200'].content['application/json'].schema).toEqual({ type: 'string' });
    expect(await wrapped(PLATFORM_JSON, { mode: 'bundle' })).toEqual(await alone(PLATFORM_JSON, { mode: 'bundle' }));
  });
});
