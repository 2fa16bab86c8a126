// What express-openapi-validator 5.6.2 does when it is built that costs start-up time and that this
// package does not need: two wrappers, applied from outside, that change what the validator
// computes at build time and nothing it answers. Building it took ~450 ms of CPU on this contract,
// ~150 ms with both; the first `startSandbox` of a process waits on it.
//
// 1. Referenced schemas read without compiling them. The validator preprocesses the contract
//    (SchemaPreprocessor, middlewares/parsers/schema.preprocessor.js) and reads the schema behind
//    every `$ref` it meets through `resolveSchema`: `ajv.getSchema(ref).schema`. Ajv's getSchema
//    compiles a validation function for the schema before returning it, so every referenced
//    component was compiled only to read back the object the preprocessor had registered in that
//    Ajv instance (framework/ajv/index.js, `ajv.addSchema(components.schemas[id],
//    '#/components/schemas/' + id)`), and those functions were thrown away with it (the request and
//    response validators compile their own). Here `resolveSchema` reads that same registration,
//    `ajv.schemas[ref].schema`, without compiling it: the very object getSchema returns for a
//    registered key. Anything else (a ref that is not a registered key, which getSchema would
//    resolve, or not, by other means) goes to the original method, unchanged; the result goes into
//    the preprocessor's own cache either way, as the original does.
// 2. The OpenAPI meta-schema compiled only when it is used. `OpenAPISchemaValidator`
//    (framework/openapi.schema.validator.js) compiles the OpenAPI 3.1 schema in its constructor,
//    also with `validateApiSpec: false`, where its `validate` is never called (~100 ms). Here it
//    is compiled on the first `validate`, by the original class with the same options.
//
// Wrappers and not patch-package, for the reason route-lookup-cache.ts gives: they ship with the
// package. Each is installed once per module instance (the very modules the validator requires),
// and is a no-op to delete once a validator release stops doing that work.
import { validatorRequire } from './route-lookup-cache.ts';

type ResolveSchema = (this: Preprocessor, schema: unknown) => unknown;
interface Preprocessor {
  /** The preprocessor's Ajv: its registry of added schemas, by key (Ajv's own `schemas` member). */
  ajv: { schemas: Record<string, { schema?: unknown } | undefined> };
  resolvedSchemaCache: Map<string, unknown>;
}
interface SchemaPreprocessorModule {
  SchemaPreprocessor: { prototype: { resolveSchema: ResolveSchema & { [ORIGINAL]?: ResolveSchema } } };
}

interface SpecValidatorOptions {
  version: string;
  validateApiSpec: boolean;
}
interface SpecValidator {
  validate(document: unknown): { errors: unknown[] };
}
type SpecValidatorClass = (new (options: SpecValidatorOptions) => SpecValidator) & { [ORIGINAL]?: SpecValidatorClass };
interface SpecValidatorModule {
  OpenAPISchemaValidator: SpecValidatorClass;
}

/** On a wrapper: what it wraps (it marks the wrapper installed, and tests compare the two). */
export const ORIGINAL = Symbol.for('payment-platform.sandbox.validatorOriginal');

/** A module of express-openapi-validator's own `dist/`, the very instance the validator requires. */
function validatorModule<T>(...path: string[]): T {
  return validatorRequire()(['.', ...path].join('/')) as T;
}

export const validatorSchemaPreprocessorModule = () => validatorModule<SchemaPreprocessorModule>('middlewares', 'parsers', 'schema.preprocessor.js');
export const validatorSpecValidatorModule = () => validatorModule<SpecValidatorModule>('framework', 'openapi.schema.validator.js');

/** Both wrappers, each once. */
export function trimValidatorStartUp(): void {
  resolveValidatorSchemasByRegistry();
  compileSpecValidatorLazily();
}

/** Installs the registry lookup once per module instance (later calls change nothing). */
export function resolveValidatorSchemasByRegistry(module: SchemaPreprocessorModule = validatorSchemaPreprocessorModule()): void {
  const prototype = module.SchemaPreprocessor.prototype;
  const original = prototype.resolveSchema;
  if (original[ORIGINAL]) return;
  prototype.resolveSchema = Object.assign(
    function (this: Preprocessor, schema: unknown) {
      const ref = schema !== null && typeof schema === 'object' ? (schema as { $ref?: unknown }).$ref : undefined;
      if (typeof ref === 'string' && !this.resolvedSchemaCache.has(ref) && Object.hasOwn(this.ajv.schemas, ref)) {
        const found = this.ajv.schemas[ref]?.schema;
        if (found !== null && typeof found === 'object') {
          this.resolvedSchemaCache.set(ref, found);
          return found;
        }
      }
      return original.call(this, schema);
    },
    { [ORIGINAL]: original },
  );
}

/** Installs the lazily compiled OpenAPI meta-schema once per module instance (later calls change nothing). */
export function compileSpecValidatorLazily(module: SpecValidatorModule = validatorSpecValidatorModule()): void {
  const Original = module.OpenAPISchemaValidator;
  if (Original[ORIGINAL]) return;
  class LazySpecValidator implements SpecValidator {
    static readonly [ORIGINAL] = Original;
    #compiled: SpecValidator | undefined;
    constructor(private readonly options: SpecValidatorOptions) {}
    validate(document: unknown) {
      this.#compiled ??= new Original(this.options);
      return this.#compiled.validate(document);
    }
  }
  module.OpenAPISchemaValidator = LazySpecValidator;
}
