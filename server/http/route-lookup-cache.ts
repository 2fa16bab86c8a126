// express-openapi-validator 5.6.2 finds a request's operation by compiling `pathToRegexp` for every
// documented path, on every request (middlewares/openapi.metadata.js, `lookupRoute`): with ~60 paths
// that is most of the validator's routing cost. Upstream pull request #1217 caches the compiled
// matchers, keyed by the Express route and the strict / case-sensitive routing settings. Until a
// release has it, the same cache is applied here, from outside: the `pathToRegexp` export of the
// very `path-to-regexp` module the validator requires (resolved from the validator's own folder, so
// the same module instance, whatever copy npm hoists) is replaced by a memoized one, keyed by the
// path and its options. The validator reads that export at each call, so it gets the cached matcher.
//
// Why a wrapper and not patch-package: this package is published, and a patch applied by the
// workspace's postinstall would never reach its consumers (their `npm install` does not run our
// postinstall), nor does it need a new dependency or a network-dependent install step in CI. The
// wrapper ships with the sandbox, needs nothing at install time, and becomes a no-op to delete once
// a validator release caches on its own. It is transparent: pathToRegexp is a pure function of its
// arguments, its result (`{ regexp, keys }`, the regexp neither global nor sticky) is only read, and
// anything that is not a string path with plain options (arrays, token data, a `decode` function)
// is compiled as before, uncached.
import { createRequire } from 'node:module';

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => { regexp: RegExp; keys: unknown[] };
interface PathToRegexpModule {
  pathToRegexp: PathToRegexp;
}

const MEMOIZED = Symbol.for('payment-platform.sandbox.memoizedPathToRegexp');
/** A guard for a process that would compile unbounded distinct paths: the contract has ~60. */
const MAX_ENTRIES = 10_000;

/** The `path-to-regexp` module instance that express-openapi-validator itself requires. */
export function validatorPathToRegexpModule(): PathToRegexpModule {
  return validatorRequire()('path-to-regexp') as PathToRegexpModule;
}

/**
 * `require` as express-openapi-validator's own entry module has it: what it resolves (its
 * dependencies, `./` paths inside its `dist/`) is the very module instance the validator uses,
 * whatever copy npm hoists. The wrappers of this folder patch those instances.
 */
export function validatorRequire(): NodeJS.Require {
  return createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
}

/**
 * A cache key when the options are plain values (what the validator passes), else undefined. Built
 * by concatenation in the options' own order, with each value's type: it runs for every documented
 * path on every request (sorting and JSON.stringify were ~1.5% of a list request's CPU). The same
 * options in another order are another entry, compiled once more, never a wrong one.
 */
export function keyOf(path: unknown, options: Record<string, unknown> | undefined): string | undefined {
  if (typeof path !== 'string') return undefined;
  let key = `${path.length}:${path}`;
  if (options === undefined) return key;
  for (const name of Object.keys(options)) {
    const value = options[name];
    const type = typeof value;
    if (type !== 'undefined' && type !== 'string' && type !== 'number' && type !== 'boolean') return undefined;
    const text = String(value);
    key += `|${name.length}:${name}=${type}:${text.length}:${text}`; // lengths: no two option sets spell the same key
  }
  return key;
}

/** Installs the memoized `pathToRegexp` once per module instance (later calls change nothing). */
export function cacheValidatorRouteLookup(module: PathToRegexpModule = validatorPathToRegexpModule()): void {
  const original = module.pathToRegexp as PathToRegexp & { [MEMOIZED]?: true };
  if (original[MEMOIZED]) return;
  const cache = new Map<string, ReturnType<PathToRegexp>>();
  const memoized = Object.assign(
    (path: unknown, options?: Record<string, unknown>) => {
      const key = keyOf(path, options);
      if (key === undefined) return original(path, options);
      let compiled = cache.get(key);
      if (!compiled) {
        compiled = original(path, options);
        if (cache.size >= MAX_ENTRIES) cache.clear();
        cache.set(key, compiled);
      }
      return compiled;
    },
    { [MEMOIZED]: true as const },
  );
  module.pathToRegexp = memoized;
}
