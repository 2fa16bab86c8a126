// An integer parameter is written in decimal digits. The validator coerces query and path strings
// the way JavaScript's Number() reads them, so `limit=0x1`, `1e1`, `+5`, ` 7` and `2.0` passed as 1,
// 10, 5, 7 and 2: other spellings of the same request, which the contract's `type: integer` does
// not mean. Checked on the raw text, before the validator coerces it.
import type { Request, RequestHandler } from 'express';
import { invalidRequest, type Problem } from './errors.ts';

const DECIMAL = /^-?[0-9]+$/;
const MESSAGE = 'must be an integer written in decimal digits';

/** The raw values of query parameter `name` (each of a repeated one). */
function rawQuery(req: Request, name: string): string[] {
  const at = req.originalUrl.indexOf('?');
  return at === -1 ? [] : new URLSearchParams(req.originalUrl.slice(at + 1)).getAll(name);
}

/** The raw text of path parameter `name`: the segment where the template has `{name}`, percent-decoded. */
function rawPath(req: Request, template: string, name: string): string | undefined {
  const index = template.split('/').indexOf(`{${name}}`);
  const segment = index === -1 ? undefined : req.path.split('/')[index];
  try {
    return segment === undefined ? undefined : decodeURIComponent(segment);
  } catch {
    return undefined; // an undecodable path is refused elsewhere
  }
}

/** A 400 in the request's area shape when an integer query or path parameter is not decimal digits. */
export const refuseLooseIntegers: RequestHandler = (req, _res, next) => {
  const operation = req.operation;
  if (!operation?.integers.length) return next();
  const problems: Problem[] = [];
  for (const { in: location, name } of operation.integers) {
    const values = location === 'query' ? rawQuery(req, name) : [rawPath(req, operation.template, name)];
    if (values.some((value) => value !== undefined && !DECIMAL.test(value))) {
      problems.push({ location, pointer: `/${name}`, keyword: 'type', message: MESSAGE });
    }
  }
  next(problems.length ? invalidRequest(problems) : undefined);
};
