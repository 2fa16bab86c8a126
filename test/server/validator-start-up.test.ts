// What express-openapi-validator no longer does when it is built (server/http/validator-start-up.ts):
// compile each referenced schema while preprocessing the contract, and compile the OpenAPI
// meta-schema that `validateApiSpec: false` never uses. Counted as compilations by the very Ajv the
// validator requires, against the validator's own code run on the same contract; the documents the
// preprocessing leaves (which the request and response validators compile from) must not change.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import {
  atPointer,
  compileSpecValidatorLazily,
  ORIGINAL,
  resolveValidatorSchemasByPointer,
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

/** The validator's preprocessing of the contract, as OpenApiValidator.installMiddleware runs it. */
function preprocess(): { apiDoc: unknown; apiDocRes: unknown } {
  const { SchemaPreprocessor } = preprocessor as unknown as {
    SchemaPreprocessor: new (apiDoc: unknown, ajvOptions: unknown, responses: unknown) => { preProcess(): { apiDoc: unknown; apiDocRes: unknown } };
  };
  // The Ajv options the validator derives from the sandbox's own (http/contract-validator.ts).
  const { ajvOpts } = new OpenApiValidator({ apiSpec: contract(), validateApiSpec: false, validateRequests: { allErrors: true }, validateResponses: {} });
  return new SchemaPreprocessor(contract(), ajvOpts.preprocessor, {}).preProcess();
}

describe('preprocessing the contract', () => {
  it('compiles no schema with the wrapper, where the validator alone compiles every referenced one', () => {
    withoutWrappers();
    const alone = compilations(preprocess);
    resolveValidatorSchemasByPointer(preprocessor);
    const wrapped = compilations(preprocess);
    expect(alone).toBeGreaterThan(50);
    expect(wrapped).toBe(0); // the contract has no discriminator, the one other thing preprocessing compiles
  });

  it('leaves the same request and response documents as the validator alone', () => {
    withoutWrappers();
    const alone = preprocess();
    resolveValidatorSchemasByPointer(preprocessor);
    const wrapped = preprocess();
    expect(JSON.stringify(wrapped.apiDoc)).toBe(JSON.stringify(alone.apiDoc));
    expect(JSON.stringify(wrapped.apiDocRes)).toBe(JSON.stringify(alone.apiDocRes));
  });

  it('reads JSON pointers as RFC 6901 spells them, and nothing but local ones', () => {
    const document = { components: { schemas: { 'a/b': { type: 'string' }, 'm~n': { type: 'integer' }, Text: { type: 'string' } } } };
    expect(atPointer(document, '#/components/schemas/a~1b')).toBe(document.components.schemas['a/b']);
    expect(atPointer(document, '#/components/schemas/m~0n')).toBe(document.components.schemas['m~n']);
    expect(atPointer(document, '#/components/schemas/Missing')).toBeUndefined();
    expect(atPointer(document, '#/components/schemas/Text/type/length')).toBeUndefined(); // not an object's own member
    expect(atPointer(document, 'other.yaml#/components/schemas/Text')).toBeUndefined();
    expect(atPointer(document, '#/components/schemas/toString')).toBeUndefined();
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
