// What express-openapi-validator 5.6.2 does when it is built that costs start-up time and that this
// package does not need: three wrappers, applied from outside, that change what the validator
// computes at build time and nothing it answers. Building it took ~450 ms of CPU on this contract,
// ~150 ms with the first two, less with the third; the first `startSandbox` of a process waits on it.
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
// 3. An already bundled document not bundled again. The validator hands the contract to
//    json-schema-ref-parser's `bundle` (framework/index.js, `loadSpec`), which crawls every value of
//    it to inventory its `$ref`s (~140 ms on this contract's bundle) and then sets each reference
//    that stays inside the document to its own URL hash (bundle.js, `remap`): the very string it
//    already holds when the reference is a plain local pointer such as `#/components/schemas/Link`.
//    A document whose every `$ref` is such a pointer (`LOCAL_POINTER`) to a member that exists and is
//    no reference itself (`bundle` points a reference to a reference through to its end), with
//    no root `$id`, comes back from `bundle` as it went in, so `loadSpec` answers it as is. Anything
//    else (the `dereference` mode, a file path, an external or escaped pointer, one that does not resolve, which `bundle`
//    reports) goes to the original method, unchanged. The generated bundles are such documents:
//    test/server/validator-start-up.test.ts compares both answers on each of them.
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

type LoadSpec = (this: unknown, spec: unknown, refParser?: unknown) => Promise<unknown>;
interface FrameworkModule {
  OpenAPIFramework: { prototype: { loadSpec: LoadSpec & { [ORIGINAL]?: LoadSpec } } };
}

export const validatorFrameworkModule = () => validatorModule<FrameworkModule>('framework', 'index.js');
export const validatorSchemaPreprocessorModule = () => validatorModule<SchemaPreprocessorModule>('middlewares', 'parsers', 'schema.preprocessor.js');
export const validatorSpecValidatorModule = () => validatorModule<SpecValidatorModule>('framework', 'openapi.schema.validator.js');

/** The three wrappers, each once. */
export function trimValidatorStartUp(): void {
  resolveValidatorSchemasByRegistry();
  compileSpecValidatorLazily();
  keepBundledDocuments();
}

/** A reference `bundle` leaves as it is: a pointer to a named component, in plain characters. */
const LOCAL_POINTER = /^#\/components\/[A-Za-z]+\/[A-Za-z0-9._-]+$/;

/**
 * Whether every `$ref` of the document is a LOCAL_POINTER to a member it has that is no reference
 * itself (and it has no root
 * `$id`, which would change the base the references resolve against): then json-schema-ref-parser's
 * `bundle` would give it back unchanged. One walk over the document, no copy.
 */
export function isBundled(document: unknown): boolean {
  if (document === null || typeof document !== 'object' || Array.isArray(document) || '$id' in document) return false;
  const root = document as Record<string, unknown>;
  /** An object that is no reference itself: `bundle` would point a reference to it through to its target. */
  const plain = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value) && !('$ref' in value);
  const resolves = (ref: string) => {
    const [, , section, name] = ref.split('/') as [string, string, string, string];
    const components = root.components;
    if (!plain(components) || !Object.hasOwn(components, section)) return false;
    const members = components[section];
    return plain(members) && Object.hasOwn(members, name) && plain(members[name]);
  };
  const pending: unknown[] = [document];
  const seen = new Set<object>();
  while (pending.length) {
    const value = pending.pop();
    if (value === null || typeof value !== 'object' || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) {
      pending.push(...value);
      continue;
    }
    if ('$ref' in value) {
      const ref = (value as { $ref: unknown }).$ref;
      if (typeof ref === 'string' ? !LOCAL_POINTER.test(ref) || !resolves(ref) : true) return false;
    }
    for (const key in value) pending.push((value as Record<string, unknown>)[key]);
  }
  return true;
}

/** Installs the bundled-document shortcut once per module instance (later calls change nothing). */
export function keepBundledDocuments(module: FrameworkModule = validatorFrameworkModule()): void {
  const prototype = module.OpenAPIFramework.prototype;
  const original = prototype.loadSpec;
  if (original[ORIGINAL]) return;
  prototype.loadSpec = Object.assign(
    function (this: unknown, spec: unknown, refParser?: unknown) {
      const bundling = refParser === undefined || (refParser !== null && typeof refParser === 'object' && (refParser as { mode?: unknown }).mode !== 'dereference');
      if (bundling && typeof spec !== 'string' && isBundled(spec)) return Promise.resolve(spec);
      return original.call(this, spec, refParser);
    },
    { [ORIGINAL]: original },
  );
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
