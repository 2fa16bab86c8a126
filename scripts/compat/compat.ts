// The breaking-change rules of `make check-compat`: what a client written against the released
// contract would see break in the current one. A focused checker (no network, no binary): the
// joined bundle is plain JSON, and the rules below are the contract's compatibility policy (README,
// "Compatibility and deprecation policy").
//
// Breaking, unless the major version of info.version changes:
// - removed-operation: an operation (path and method) or a webhook is gone;
// - removed-response-field: a property of a response body (or of a webhook's payload) is gone, or
//   is no longer required (clients read it without checking);
// - removed-response-header: a header of a response is gone, or is no longer required;
// - removed-enum-value: a value of an enum is gone, in a request or a response;
// - added-enum-value: a response enum got a value and is not open (`x-extensible-enum: true` in the
//   released contract: clients of an open enum are told to expect new values, e.g. error codes);
// - new-required-request-field: a request body property, or a parameter, is newly required;
// - narrowed-type: a request accepts less (a type dropped, a bound tightened, a pattern or enum
//   added, an alternative of a oneOf/anyOf no longer accepted), or a response may carry a type it
//   could not before (a header's too, or an alternative no released one describes).
// A schema without `type` has the types of its enum/const values or of its alternatives; a bound or
// pattern that every value a request enum/const listed before meets narrows nothing.

export type Rule =
  | 'removed-operation'
  | 'removed-response-field'
  | 'removed-response-header'
  | 'removed-enum-value'
  | 'added-enum-value'
  | 'new-required-request-field'
  | 'narrowed-type';

export interface Finding {
  rule: Rule;
  /** Where, as `METHOD /path request|response <status> <media type> .field…`. */
  where: string;
  message: string;
}

export interface Comparison {
  breaking: Finding[];
  /** The major version of info.version changed: breaking changes are allowed. */
  majorChanged: boolean;
  released: string;
  current: string;
}

type Doc = Record<string, any>;
type Side = 'request' | 'response';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** `1.2.3` → 1, `v2` → 2, `v20250823.0859` → 20250823. */
export function majorOf(version: unknown): string {
  const match = /^v?(\d+)/.exec(String(version ?? ''));
  return match ? match[1]! : String(version);
}

/**
 * The object a `$ref` points to. In OpenAPI 3.1 the keywords beside a `$ref` apply too (a field's
 * own `maxLength` next to a shared string rule): they are kept, over the target's.
 */
function resolve(doc: Doc, node: any, depth = 0): any {
  if (!node || typeof node !== 'object' || typeof node.$ref !== 'string' || depth > 50) return node;
  if (!node.$ref.startsWith('#/')) return node;
  let target: any = doc;
  for (const part of node.$ref.slice(2).split('/')) target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  const { $ref: _ref, ...beside } = node;
  const resolved = resolve(doc, target, depth + 1);
  return Object.keys(beside).length && resolved && typeof resolved === 'object' ? { ...resolved, ...beside } : resolved;
}

const accepts = (types: string[], t: string) => types.includes(t) || (t === 'integer' && types.includes('number'));

function enumOf(s: any): unknown[] | undefined {
  if (Array.isArray(s.enum)) return s.enum;
  if ('const' in s) return [s.const];
  return undefined;
}

/** The types two type lists both allow (an integer is a number). */
const both = (x: string[], y: string[]) => [...new Set(x.flatMap((t) => (accepts(y, t) ? [t] : t === 'number' && y.includes('integer') ? ['integer'] : [])))];

/** The JSON Schema type of a value (an integral number is an integer). */
function typeOfValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/**
 * The types a schema allows, or undefined for any: its `type`; else those of its `enum`/`const`
 * values; else, when every alternative of its `oneOf`/`anyOf` has types, their union. (So
 * `type: [string, array]` and `anyOf: [{type: string}, {type: array}]` compare alike.) The types of
 * its `allOf` members narrow what it allows further.
 */
function typesOf(doc: Doc, s: any, depth = 0): string[] | undefined {
  if (!s || typeof s !== 'object' || depth > 20) return undefined;
  let types: string[] | undefined;
  if (s.type !== undefined) types = (Array.isArray(s.type) ? s.type : [s.type]).map(String);
  else if (enumOf(s)) types = [...new Set(enumOf(s)!.map(typeOfValue))];
  else {
    for (const k of ['oneOf', 'anyOf'] as const) {
      if (!Array.isArray(s[k]) || types) continue;
      const each = s[k].map((m: any) => typesOf(doc, resolve(doc, m), depth + 1));
      if (each.every(Boolean)) types = [...new Set(each.flat() as string[])];
    }
  }
  for (const member of s.allOf ?? []) {
    const own = typesOf(doc, resolve(doc, member), depth + 1);
    if (own) types = types ? both(types, own) : own;
  }
  return types;
}

/** Whether `value` already meets `keyword: bound` (a keyword says nothing of the other types). */
function meets(value: unknown, keyword: string, bound: any): boolean {
  switch (keyword) {
    case 'maxLength':
      return typeof value !== 'string' || [...value].length <= bound;
    case 'minLength':
      return typeof value !== 'string' || [...value].length >= bound;
    case 'maxItems':
      return !Array.isArray(value) || value.length <= bound;
    case 'minItems':
      return !Array.isArray(value) || value.length >= bound;
    case 'maxProperties':
    case 'minProperties': {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return true;
      const n = Object.keys(value).length;
      return keyword === 'maxProperties' ? n <= bound : n >= bound;
    }
    case 'maximum':
      return typeof value !== 'number' || value <= bound;
    case 'exclusiveMaximum':
      return typeof value !== 'number' || value < bound;
    case 'minimum':
      return typeof value !== 'number' || value >= bound;
    case 'exclusiveMinimum':
      return typeof value !== 'number' || value > bound;
    case 'pattern':
      return typeof value !== 'string' || new RegExp(bound, 'u').test(value);
    default:
      return false;
  }
}

const key = (v: unknown) => JSON.stringify(v);

/**
 * A pattern with its escapes of one code unit below 0x100 in one spelling: `\u00XX` and `\xXX`
 * (either case) are the same character in an ECMA-262 pattern, with or without the `u` flag, so
 * a pattern respelled from one to the other narrows nothing. An escaped backslash stays as it is.
 */
export function canonicalPattern(pattern: string): string {
  return pattern.replace(/\\(?:\\|u00([0-9A-Fa-f]{2})|x([0-9A-Fa-f]{2}))/g, (escape, u?: string, x?: string) => {
    const hex = u ?? x;
    return hex === undefined ? escape : `\\x${hex.toUpperCase()}`;
  });
}

/** Properties and required names of a schema and of its allOf members. */
function shape(doc: Doc, s: any): { properties: Record<string, any>; required: Set<string> } {
  const properties: Record<string, any> = { ...(s.properties ?? {}) };
  const required = new Set<string>(s.required ?? []);
  for (const member of s.allOf ?? []) {
    const m = shape(doc, resolve(doc, member));
    for (const [name, p] of Object.entries(m.properties)) properties[name] ??= p;
    for (const r of m.required) required.add(r);
  }
  return { properties, required };
}

const TIGHTER_WHEN_SMALLER = ['maxLength', 'maxItems', 'maxProperties', 'maximum', 'exclusiveMaximum'] as const;
const TIGHTER_WHEN_LARGER = ['minLength', 'minItems', 'minProperties', 'minimum', 'exclusiveMinimum'] as const;

/**
 * The bounds and patterns a value of a schema must meet, its own and its allOf members': the
 * tightest of each bound, every pattern (canonically spelled). So a rule that moves between a
 * schema and an allOf member, or is written out where it was reached through one (the bundles'
 * Text rule), compares as the same rule.
 */
function rulesOf(doc: Doc, raw: any, depth = 0): { bounds: Record<string, number>; patterns: Map<string, string> } {
  const bounds: Record<string, number> = {};
  const patterns = new Map<string, string>();
  const add = (t: any) => {
    for (const k of TIGHTER_WHEN_SMALLER) if (typeof t[k] === 'number') bounds[k] = Math.min(bounds[k] ?? Infinity, t[k]);
    for (const k of TIGHTER_WHEN_LARGER) if (typeof t[k] === 'number') bounds[k] = Math.max(bounds[k] ?? -Infinity, t[k]);
    if (typeof t.pattern === 'string') patterns.set(canonicalPattern(t.pattern), t.pattern);
  };
  const merge = (m: ReturnType<typeof rulesOf>) => {
    add(m.bounds);
    for (const [canonical, pattern] of m.patterns) patterns.set(canonical, pattern);
  };
  if (!raw || typeof raw !== 'object' || depth > 20) return { bounds, patterns };
  // A `$ref` with keywords beside it: the target's rules and its own both apply (OpenAPI 3.1).
  const { $ref, ...beside } = raw;
  const s = typeof $ref === 'string' ? beside : raw;
  if (typeof $ref === 'string') merge(rulesOf(doc, resolve(doc, { $ref }), depth + 1));
  add(s);
  for (const member of s.allOf ?? []) merge(rulesOf(doc, member, depth + 1));
  return { bounds, patterns };
}

class Checker {
  readonly findings: Finding[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly before: Doc,
    private readonly after: Doc,
  ) {}

  private add(rule: Rule, where: string, message: string): void {
    this.findings.push({ rule, where, message });
  }

  schema(bRaw: any, aRaw: any, side: Side, where: string): void {
    const b = resolve(this.before, bRaw);
    const a = resolve(this.after, aRaw);
    if (!b || !a || typeof b !== 'object' || typeof a !== 'object') return;
    // A schema pair met again within one operation (a recursive schema, a reused component) adds
    // nothing; a `$ref` with keywords beside it is its own schema, compared wherever it stands.
    const pureRef = (raw: any) => typeof raw?.$ref === 'string' && Object.keys(raw).length === 1;
    const pairKey = `${side}|${bRaw?.$ref}|${aRaw?.$ref}`;
    if (pureRef(bRaw) && pureRef(aRaw)) {
      if (this.seen.has(pairKey)) return;
      this.seen.add(pairKey);
    }

    const bTypes = typesOf(this.before, b);
    const aTypes = typesOf(this.after, a);
    // A request schema that took only listed values (`enum`, `const`): a bound or pattern those values all meet narrows nothing.
    const bValues = enumOf(b);
    const narrows = (keyword: string, bound: unknown) => !bValues?.every((v) => meets(v, keyword, bound));
    if (side === 'request' && aTypes) {
      const lost = bTypes ? bTypes.filter((t) => !accepts(aTypes, t)) : ['any type'];
      if (lost.length) this.add('narrowed-type', where, `accepts ${lost.join(', ')} no more (now ${aTypes.join(' | ')})`);
    }
    if (side === 'response' && bTypes) {
      const gained = aTypes ? aTypes.filter((t) => !accepts(bTypes, t)) : ['any type'];
      if (gained.length) this.add('narrowed-type', where, `may now answer ${gained.join(', ')} (was ${bTypes.join(' | ')})`);
    }

    if (side === 'request') {
      const { bounds: bb, patterns: bp } = rulesOf(this.before, bRaw);
      const { bounds: ab, patterns: ap } = rulesOf(this.after, aRaw);
      for (const k of TIGHTER_WHEN_SMALLER) {
        if (ab[k] !== undefined && (bb[k] === undefined || ab[k] < bb[k]) && narrows(k, ab[k])) this.add('narrowed-type', where, `${k} ${bb[k] ?? 'none'} → ${ab[k]}`);
      }
      for (const k of TIGHTER_WHEN_LARGER) {
        if (ab[k] !== undefined && (bb[k] === undefined || ab[k] > bb[k]) && narrows(k, ab[k])) this.add('narrowed-type', where, `${k} ${bb[k] ?? 'none'} → ${ab[k]}`);
      }
      for (const [canonical, pattern] of ap) {
        if (!bp.has(canonical) && narrows('pattern', pattern)) this.add('narrowed-type', where, `pattern ${[...bp.values()].join(' and ') || 'none'} → ${pattern}`);
      }
    }

    const bEnum = enumOf(b);
    const aEnum = enumOf(a);
    if (bEnum && aEnum) {
      const aKeys = new Set(aEnum.map(key));
      const bKeys = new Set(bEnum.map(key));
      const removed = bEnum.filter((v) => !aKeys.has(key(v)));
      const added = aEnum.filter((v) => !bKeys.has(key(v)));
      if (removed.length) this.add('removed-enum-value', where, `enum value(s) removed: ${removed.map(key).join(', ')}`);
      if (added.length && side === 'response' && b['x-extensible-enum'] !== true) {
        this.add('added-enum-value', where, `enum value(s) added to a closed enum: ${added.map(key).join(', ')} (mark it x-extensible-enum: true in a major version first)`);
      }
    } else if (aEnum && !bEnum && side === 'request') {
      this.add('narrowed-type', where, `now limited to the enum ${aEnum.map(key).join(', ')}`);
    }

    const bShape = shape(this.before, b);
    const aShape = shape(this.after, a);
    for (const [name, bProp] of Object.entries(bShape.properties)) {
      const aProp = aShape.properties[name];
      if (aProp === undefined) {
        if (side === 'response') this.add('removed-response-field', `${where}.${name}`, `response field ${name} removed`);
        continue;
      }
      this.schema(bProp, aProp, side, `${where}.${name}`);
    }
    if (side === 'request') {
      for (const name of aShape.required) {
        if (!bShape.required.has(name)) this.add('new-required-request-field', `${where}.${name}`, `request field ${name} is newly required`);
      }
    } else {
      for (const name of bShape.required) {
        if (!aShape.required.has(name) && name in aShape.properties) {
          this.add('removed-response-field', `${where}.${name}`, `response field ${name} is no longer required (clients read it without checking)`);
        }
      }
    }
    if (b.items && a.items) this.schema(b.items, a.items, side, `${where}[]`);
    if (b.additionalProperties && a.additionalProperties && typeof b.additionalProperties === 'object') {
      this.schema(b.additionalProperties, a.additionalProperties, side, `${where}{}`);
    }
    for (const k of ['oneOf', 'anyOf'] as const) {
      if (!Array.isArray(b[k]) || !Array.isArray(a[k])) continue;
      if (b[k].length === a[k].length) {
        b[k].forEach((member: any, i: number) => this.schema(member, a[k][i], side, `${where}(${k}[${i}])`));
      } else {
        this.alternatives(b[k], a[k], side, `${where}(${k})`);
      }
    }
  }

  /**
   * `oneOf`/`anyOf` lists of different lengths: each alternative a client relies on must still have a
   * counterpart that breaks nothing. In a request, each released alternative (what clients send)
   * must still be accepted by a current one; in a response, each current alternative (what clients
   * may now receive) must be one they knew. An alternative is paired with the one of the same `$ref`
   * first, else with any that compares clean; one left without a counterpart is a narrowed type.
   */
  private alternatives(bList: any[], aList: any[], side: Side, where: string): void {
    const name = (m: any) => (typeof m?.$ref === 'string' ? m.$ref.split('/').pop() : undefined);
    const label = (m: any, i: number) => name(m) ?? `#${i}`;
    // The list clients rely on, and the list each of its members must find a counterpart in.
    const [relied, offered] = side === 'request' ? [bList, aList] : [aList, bList];
    relied.forEach((member, i) => {
      const pair = (other: any) => (side === 'request' ? this.trial(member, other, side, where) : this.trial(other, member, side, where));
      const sameRef = offered.find((o) => name(o) !== undefined && name(o) === name(member));
      if (sameRef) {
        // The same component on both sides: its own changes are reported as they are.
        if (side === 'request') this.schema(member, sameRef, side, `${where}[${label(member, i)}]`);
        else this.schema(sameRef, member, side, `${where}[${label(member, i)}]`);
        return;
      }
      if (offered.some((o) => pair(o).length === 0)) return;
      this.add(
        'narrowed-type',
        `${where}[${label(member, i)}]`,
        side === 'request'
          ? `the alternative ${label(member, i)} is accepted by no alternative any more`
          : `may now answer the alternative ${label(member, i)}, which no released alternative describes`,
      );
    });
  }

  /** The findings of comparing one pair on its own, without adding them. */
  private trial(bRaw: any, aRaw: any, side: Side, where: string): Finding[] {
    const checker = new Checker(this.before, this.after);
    checker.schema(bRaw, aRaw, side, where);
    return checker.findings;
  }

  content(bContent: any, aContent: any, side: Side, where: string): void {
    for (const [type, bMedia] of Object.entries<any>(bContent ?? {})) {
      const aMedia = aContent?.[type];
      if (aMedia?.schema && bMedia?.schema) this.schema(bMedia.schema, aMedia.schema, side, `${where} ${type}`);
    }
  }

  parameters(bItem: any, bOp: any, aItem: any, aOp: any, where: string): void {
    const params = (doc: Doc, item: any, op: any) => {
      const all = new Map<string, any>();
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        const r = resolve(doc, p);
        if (r?.name) all.set(`${r.in} ${r.name}`, r);
      }
      return all;
    };
    const bParams = params(this.before, bItem, bOp);
    const aParams = params(this.after, aItem, aOp);
    for (const [name, a] of aParams) {
      const b = bParams.get(name);
      if (a.required && !b?.required) this.add('new-required-request-field', `${where} ${name}`, `parameter ${name} is newly required`);
      if (b?.schema && a.schema) this.schema(b.schema, a.schema, 'request', `${where} ${name}`);
    }
  }

  /** The headers of one response: each released one still sent (and still required if it was), its schema as a response's. */
  headers(bHeaders: any, aHeaders: any, where: string): void {
    const byName = (doc: Doc, headers: any) =>
      new Map(Object.entries<any>(headers ?? {}).map(([name, h]) => [name.toLowerCase(), resolve(doc, h)]));
    const before = byName(this.before, bHeaders);
    const after = byName(this.after, aHeaders);
    for (const [name, b] of before) {
      const a = after.get(name);
      if (!a) {
        this.add('removed-response-header', `${where} header ${name}`, `response header ${name} removed`);
        continue;
      }
      if (b?.required && !a.required) this.add('removed-response-header', `${where} header ${name}`, `response header ${name} is no longer required`);
      if (b?.schema && a.schema) this.schema(b.schema, a.schema, 'response', `${where} header ${name}`);
    }
  }

  /** `inbound` is false for a webhook: the platform sends it, so its body is what clients read. */
  operation(bItem: any, bOp: any, aItem: any, aOp: any, where: string, inbound: boolean): void {
    this.seen.clear();
    this.parameters(bItem, bOp, aItem, aOp, where);
    const bBody = resolve(this.before, bOp.requestBody);
    const aBody = resolve(this.after, aOp.requestBody);
    if (inbound && aBody?.required && bBody && !bBody.required) this.add('new-required-request-field', `${where} request`, 'the request body is newly required');
    if (bBody && aBody) this.content(bBody.content, aBody.content, inbound ? 'request' : 'response', `${where} ${inbound ? 'request' : 'payload'}`);
    if (!inbound) return;
    for (const [status, bRes] of Object.entries<any>(bOp.responses ?? {})) {
      const aRes = aOp.responses?.[status];
      if (!aRes) continue;
      this.content(resolve(this.before, bRes).content, resolve(this.after, aRes).content, 'response', `${where} response ${status}`);
      this.headers(resolve(this.before, bRes).headers, resolve(this.after, aRes).headers, `${where} response ${status}`);
    }
  }

  run(): void {
    for (const [group, inbound] of [['paths', true], ['webhooks', false]] as const) {
      for (const [path, bRaw] of Object.entries<any>(this.before[group] ?? {})) {
        const bItem = resolve(this.before, bRaw);
        const aItem = resolve(this.after, this.after[group]?.[path]);
        for (const method of METHODS) {
          const bOp = bItem?.[method];
          if (!bOp) continue;
          const where = `${method.toUpperCase()} ${group === 'webhooks' ? `webhook ${path}` : path}`;
          const aOp = aItem?.[method];
          if (!aOp) this.add('removed-operation', where, `operation ${bOp.operationId ?? where} removed`);
          else this.operation(bItem, bOp, aItem, aOp, where, inbound);
        }
      }
    }
  }
}

/** Compares the released contract with the current one. */
export function compare(released: Doc, current: Doc): Comparison {
  const checker = new Checker(released, current);
  checker.run();
  const before = String(released.info?.version);
  const after = String(current.info?.version);
  return { breaking: checker.findings, majorChanged: majorOf(before) !== majorOf(after), released: before, current: after };
}
