// The joined platform bundle as data: its operations, and validators for their bodies, so tests
// check answers against the contract itself rather than against hand-written expectations.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

export const PLATFORM_BUNDLE = new URL('../../generated/platform.openapi.yaml', import.meta.url).pathname;

export type OpenApiDocument = {
  paths: Record<string, Record<string, any>>;
  webhooks?: Record<string, Record<string, any>>;
  components: Record<string, Record<string, any>>;
  [key: string]: any;
};

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  operation: any;
  /** JSON pointer of the operation inside the document. */
  pointer: string;
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export function loadPlatform(): OpenApiDocument {
  return parse(readFileSync(PLATFORM_BUNDLE, 'utf8'));
}

export function operationsOf(doc: OpenApiDocument, where: 'paths' | 'webhooks' = 'paths'): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc[where] ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = (item as any)[method];
      if (operation) out.push({ method, path, operationId: operation.operationId, operation, pointer: `#/${where}/${escape(path)}/${method}` });
    }
  }
  return out;
}

/** Validators for any schema in the document, addressed by JSON pointer. */
export function contractValidator(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: 'platform' });
  const cache = new Map<string, ValidateFunction>();
  return (pointer: string) => {
    let fn = cache.get(pointer);
    if (!fn) {
      fn = ajv.compile({ $ref: `platform${pointer}` });
      cache.set(pointer, fn);
    }
    return fn;
  };
}

/** JSON pointer of the schema of one response body, through a `$ref` to a shared response. */
export function responsePointer(doc: OpenApiDocument, op: Operation, status: string, mediaType: string): string {
  const response = op.operation.responses[status];
  const base = typeof response?.$ref === 'string' ? response.$ref : `${op.pointer}/responses/${status}`;
  return `${base}/content/${escape(mediaType)}/schema`;
}

/** Follows a local `$ref` (`#/components/...`) until it reaches an object that is not a reference. */
export function deref<T = any>(doc: OpenApiDocument, node: any): T {
  let current = node;
  while (current && typeof current.$ref === 'string' && current.$ref.startsWith('#/')) {
    current = current.$ref
      .slice(2)
      .split('/')
      .map((part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((at: any, key: string) => at?.[key], doc);
  }
  return current;
}

/** Named examples of a media type object (or its single `example` under the name `example`). */
export function examplesOf(doc: OpenApiDocument, media: any): Array<[string, unknown]> {
  if (!media) return [];
  if (media.examples) {
    return Object.entries<any>(media.examples).map(([name, ex]) => [name, deref(doc, ex).value]);
  }
  return 'example' in media ? [['example', media.example]] : [];
}

/** Parameters of an operation, path-level ones included, references followed. */
export function parametersOf(doc: OpenApiDocument, op: Operation, where: 'paths' | 'webhooks' = 'paths'): any[] {
  const item = doc[where]?.[op.path] ?? {};
  const all = [...(item.parameters ?? []), ...(op.operation.parameters ?? [])].map((p) => deref(doc, p));
  const seen = new Map<string, any>();
  for (const p of all) seen.set(`${p.in}:${p.name}`, p);
  return [...seen.values()];
}
