// The operations of the enforced contract, matched exactly as the routers match them: the same
// library (path-to-regexp, Express's own), case-sensitive and strict (no optional trailing slash).
// Security decides from the operation found here, and each route only runs for the operation it
// was registered for (typed-router.ts), so no other spelling of a path reaches a handler without
// that operation's security.
import { match } from 'path-to-regexp';
import type { PlatformDocument } from './contract.ts';
import { servedAs } from './head-requests.ts';

export const ROUTING = { caseSensitive: true, strict: true } as const;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** One documented operation as the server routes it. */
export interface RoutedOperation {
  /** Upper case, as `req.method`. */
  method: string;
  /** The contract's path key, e.g. `/dpy/payment-link/v1/payment-links/{link_id}/orders/{order_id}`. */
  template: string;
  /** Security scheme names of the operation's first requirement (`[]` when public). */
  schemes: string[];
  /** The media types its request body may have (`[]`: it takes none). */
  bodyTypes: string[];
  /** Its query and path parameters of type integer (http/integer-spelling.ts reads their raw text). */
  integers: IntegerParameter[];
}

export interface IntegerParameter {
  in: 'query' | 'path';
  name: string;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The contract operation this request was authenticated for (set by authenticateByContract). */
      operation?: RoutedOperation;
    }
  }
}

interface Entry extends RoutedOperation {
  matches: (path: string) => unknown;
  literals: number;
}

/** The operation of an entry, without the matcher's own fields. */
const routed = ({ matches: _matches, literals: _literals, ...operation }: Entry): RoutedOperation => operation;

/** `/payment-links/{link_id}` as Express's `/payment-links/:link_id`. */
export const expressPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

const matcher = (template: string) =>
  match(expressPath(template), { sensitive: ROUTING.caseSensitive, trailing: !ROUTING.strict, end: true, decode: false });

type Parameter = { $ref?: string; in?: string; name?: string; schema?: { $ref?: string; type?: unknown } };

/** `#/components/...` of `doc`, followed through references. */
function resolved<T extends { $ref?: string }>(doc: PlatformDocument, value: T | undefined): T | undefined {
  let current = value;
  for (let hops = 0; current?.$ref?.startsWith('#/') && hops < 8; hops++) {
    current = current.$ref.slice(2).split('/').reduce<any>((node, key) => node?.[key], doc) as T | undefined;
  }
  return current;
}

/** The media types of a request body, also when it is a `#/components/requestBodies/...` reference. */
const bodyTypesOf = (doc: PlatformDocument, body: { $ref?: string; content?: Record<string, unknown> } | undefined): string[] =>
  Object.keys(resolved(doc, body)?.content ?? {});

/** The query and path parameters of type integer of an operation (its path item's included). */
function integersOf(doc: PlatformDocument, ...lists: Array<Parameter[] | undefined>): IntegerParameter[] {
  const out: IntegerParameter[] = [];
  for (const raw of lists.flat()) {
    const parameter = resolved(doc, raw);
    const type = resolved(doc, parameter?.schema)?.type;
    const integer = type === 'integer' || (Array.isArray(type) && type.includes('integer'));
    if (integer && (parameter?.in === 'query' || parameter?.in === 'path') && parameter.name) out.push({ in: parameter.in, name: parameter.name });
  }
  return out;
}

/** A matcher over every operation of `doc` plus `extra` undocumented ones; the most literal path wins. */
export function operationMatcher(doc: PlatformDocument, extra: RoutedOperation[] = []) {
  const entries: Entry[] = [];
  const add = (op: RoutedOperation) =>
    entries.push({ ...op, matches: matcher(op.template), literals: op.template.split('/').filter((s) => s && !s.startsWith('{')).length });
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const security: Array<Record<string, string[]>> = operation.security ?? (doc as { security?: [] }).security ?? [];
      add({
        method: method.toUpperCase(),
        template,
        schemes: Object.keys(security[0] ?? {}),
        bodyTypes: bodyTypesOf(doc, operation.requestBody),
        integers: integersOf(doc, item.parameters, operation.parameters),
      });
    }
  }
  for (const op of extra) if (!entries.some((e) => e.method === op.method && e.template === op.template)) add(op);
  entries.sort((a, b) => b.literals - a.literals);
  /** HEAD is answered by GET routes (Express), so it is authenticated as the GET operation. */
  const find = (method: string, path: string): RoutedOperation | undefined => {
    const wanted = servedAs(method);
    const found = entries.find((e) => e.method === wanted && e.matches(path));
    return found && routed(found);
  };
  /** Methods documented for the path (a wrong method is a 405 with `Allow`, not a 404). */
  const methodsOf = (path: string) => entries.filter((e) => e.matches(path)).map((e) => e.method);
  return { find, methodsOf, operations: entries.map(routed) };
}
