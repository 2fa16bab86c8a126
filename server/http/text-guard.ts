// After the validator: what the contract cannot describe is text too. Request schemas leave objects
// open (unknown members are accepted; those of an object marked open, such as a subscription's
// address, are stored with it: http/contract-members.ts), and the second token form's
// credentials travel Base64-encoded in a header; neither may carry what the store cannot hold.
import type { Request, RequestHandler } from 'express';
import { parseBasicCredentials } from './basic-credentials.ts';
import { invalidRequest, type Problem, type ProblemLocation } from './errors.ts';
import { isText, NOT_TEXT, notTextPointers } from './text.ts';

const problemsIn = (location: ProblemLocation, value: unknown): Problem[] =>
  notTextPointers(value).map((pointer) => ({ location, pointer, keyword: 'pattern', message: NOT_TEXT }));

const pathParamsOf = (req: Request) => (req as { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams;

/** A 400 in the request's area shape when a string of the body, query, path or Basic credentials is not text. */
export const refuseNonText: RequestHandler = (req, _res, next) => {
  const problems = [...problemsIn('path', pathParamsOf(req)), ...problemsIn('query', req.query), ...problemsIn('body', req.body)];
  const basic = parseBasicCredentials(req.get('authorization'));
  if (basic && !(isText(basic.clientId) && isText(basic.clientSecret))) {
    problems.push({ location: 'header', pointer: '/authorization', message: `The Basic credentials ${NOT_TEXT}` });
  }
  next(problems.length ? invalidRequest(problems) : undefined);
};
