// What every answer to a fuzzed request must be: never a 5xx, never a stack trace; for another
// spelling of the path, a 404 (no spelling but the operation's own reaches it); otherwise a status
// the operation documents, in a documented media type, with a body valid against its schema.
import { contractValidator, deref, responsePointer, type OpenApiDocument, type Operation } from '../support/contract.ts';
import type { RawAnswer } from '../support/raw-http.ts';
import { expectNoStackTrace } from '../server/support/server.ts';

/** Why an answer breaks the contract of its operation, or undefined when it keeps it. */
export function contractProblem(doc: OpenApiDocument, validate: ReturnType<typeof contractValidator>, op: Operation, kind: string, answer: RawAnswer): string | undefined {
  const status = String(answer.status);
  if (answer.status >= 500) return `server error ${status}: ${answer.text.slice(0, 300)}`;
  if (answer.status >= 400) {
    try {
      expectNoStackTrace(answer.text);
    } catch (error) {
      return (error as Error).message.slice(0, 400);
    }
  }
  if (kind === 'path-spelling') return answer.status === 404 ? undefined : `another spelling of the path answered ${status}, not 404: ${answer.text.slice(0, 300)}`;
  const response = op.operation.responses[status];
  if (!response) return `status ${status} not documented (documented: ${Object.keys(op.operation.responses).join(', ')}): ${answer.text.slice(0, 300)}`;
  const content = deref(doc, response).content;
  if (!content) return undefined;
  if (!(answer.contentType in content)) return `content type "${answer.contentType}" not documented for ${status} (${Object.keys(content).join(', ')})`;
  if (!/json/.test(answer.contentType)) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `body of ${status} is not JSON: ${answer.text.slice(0, 200)}`;
  }
  const check = validate(responsePointer(doc, op, status, answer.contentType));
  if (!check(body)) return `body of ${status} breaks its schema: ${JSON.stringify(check.errors?.slice(0, 3))} body ${answer.text.slice(0, 300)}`;
  return undefined;
}
