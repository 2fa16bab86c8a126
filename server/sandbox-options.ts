// startSandbox's options checked as its types say, for JavaScript callers: a TypeError that names the
// option (and the one probably meant), never a start on other settings than asked.
import { VARIABLES } from './config.ts';

export interface StartSandboxOptions {
  /** 0 (the default) picks a free port. */
  port?: number | undefined;
  /** 127.0.0.1 by default. */
  host?: string | undefined;
  /** `memory` (the default): nothing on disk, a fresh sandbox; `disk`: PGlite in `dataDir`. */
  storage?: 'memory' | 'disk' | undefined;
  /**
   * PGlite data directory (default `.data/pglite` under the current directory); given alone, it means
   * `storage: 'disk'`. One sandbox at a time per directory: a second is refused until the first closes.
   * Its lock is renewed on timers: with the process's `setTimeout` faked (`vi.useFakeTimers()`) for
   * more than 8 s, the sandbox gives the lock up and its store refuses every call (in memory, nothing to renew).
   */
  dataDir?: string | undefined;
  /** A PostgreSQL server instead of PGlite (`storage` is then ignored). */
  databaseUrl?: string | undefined;
  /** pino level of the sandbox's JSON logs on stdout; `silent` (the default) writes none. */
  logLevel?: string | undefined;
  /**
   * Any other documented variable (`SANDBOX_ADMIN_TOKEN`, `NOTIFICATION_RETRY_BASE_MS`, ...), as
   * strings. The process environment is not read: a suite's sandbox is what it says here. An
   * option above wins over its variable here (`port` over `PORT`, `storage` and `dataDir` over
   * `DATA_DIR`, `databaseUrl` over `DATABASE_URL`, `logLevel` over `LOG_LEVEL`); a variable applies
   * when its option is not given.
   */
  env?: SandboxEnv | undefined;
}

/** A documented variable of the sandbox (its README, "Variables"). */
export type SandboxVariable = (typeof VARIABLES)[number];
/** `env` of startSandbox: documented variables only, so that a misspelt name in an object literal does not compile. */
export type SandboxEnv = { [Name in SandboxVariable]?: string | undefined };

/** What a value is, never what it holds (a database URL or a variable may carry a secret). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${(value as object).constructor?.name ?? 'Object'})`;
  return `a ${typeof value}`;
}

/** A value of an option that holds no secret as written (a number, a word), or else its kind. */
function shown(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string' && value.length <= 40) return JSON.stringify(value);
  return kindOf(value);
}

const OPTIONS = ['port', 'host', 'storage', 'dataDir', 'databaseUrl', 'logLevel', 'env'] as const;

/** Edits (insert, delete, replace, swap two neighbours) from one name to the other. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The known name a misspelt one most likely meant: the same ignoring case and `_`, a prefix of it, or two edits away. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const key = (n: string) => n.toLowerCase().replace(/_/g, '');
  return (
    known.find((k) => key(k) === key(name)) ??
    known.find((k) => key(k).startsWith(key(name)) || key(name).startsWith(key(k))) ??
    known.find((k) => distance(key(k), key(name)) <= 2)
  );
}

/**
 * The options as the types say, checked for JavaScript callers: a TypeError naming the option, never
 * a start on other settings than asked (`storage: 'Disk'` would otherwise keep the data in memory).
 */
export function checkOptions(options: unknown): StartSandboxOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(`startSandbox takes an options object, not ${options === null ? 'null' : typeof options}`);
  const given = options as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if ((OPTIONS as readonly string[]).includes(name)) continue;
    const hint = closest(name, OPTIONS);
    throw new TypeError(`startSandbox has no option ${JSON.stringify(name)}${hint ? ` (did you mean ${hint}?)` : ''}; its options are ${OPTIONS.join(', ')}`);
  }
  const { port, storage, env } = given;
  if (port !== undefined && !(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65_535)) {
    throw new TypeError(`port must be a whole number from 0 to 65535 (0 picks a free one), not ${shown(port)}`);
  }
  for (const name of ['host', 'dataDir', 'databaseUrl', 'logLevel'] as const) {
    const value = given[name];
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw new TypeError(`${name} must be a non-empty string, not ${name === 'databaseUrl' ? kindOf(value) : shown(value)}`);
  }
  if (storage !== undefined && storage !== 'memory' && storage !== 'disk') throw new TypeError(`storage must be 'memory' or 'disk', not ${shown(storage)}`);
  if (storage === 'memory' && given.dataDir !== undefined) throw new TypeError("storage 'memory' keeps nothing on disk: give dataDir with storage 'disk' (or alone), or no dataDir");
  if (env !== undefined) {
    if (typeof env !== 'object' || env === null || Array.isArray(env)) throw new TypeError('env must be an object of variables and their values, as strings');
    for (const [name, value] of Object.entries(env)) {
      if (!(VARIABLES as readonly string[]).includes(name)) {
        const hint = closest(name, VARIABLES);
        throw new TypeError(`env.${name} is not a variable of the sandbox${hint ? ` (did you mean ${hint}?)` : ''}; see "Variables" in its README`);
      }
      if (value === undefined) continue; // as not given (the type allows it: a spread of optional settings)
      if (typeof value !== 'string') throw new TypeError(`env.${name} must be a string, not ${kindOf(value)}`);
    }
  }
  return given as StartSandboxOptions;
}
