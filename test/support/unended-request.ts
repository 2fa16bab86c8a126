// A request whose body never ends: its head and its first bytes are sent, then nothing more. An
// answer proves the server did not wait for the body's end; `closedBySandbox`, that it closed the
// connection itself within the bound (well under the request timeout) rather than go on reading.
import { request } from 'node:http';

export interface UnendedRequest {
  method?: string;
  headers: Record<string, string>;
  /** What is sent of the body. */
  first: string | Buffer;
}

export interface UnendedAnswer {
  status: number;
  /** The answer's body, parsed when it is JSON. */
  body: unknown;
  connection?: string;
  closedBySandbox: boolean;
}

export function unendedRequest(url: string, { method = 'POST', headers, first }: UnendedRequest, boundMs = 5_000): Promise<UnendedAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers });
    let timedOut = false;
    let answered = false;
    const bound = setTimeout(() => {
      timedOut = true;
      if (!answered) reject(new Error(`no answer within ${boundMs} ms`));
      req.destroy(); // answered: the socket's close then resolves, not closed by the sandbox
    }, boundMs);
    req.on('response', (answer) => {
      answered = true;
      let text = '';
      answer.on('data', (chunk) => (text += chunk));
      answer.on('end', () => {
        const socket = req.socket!;
        const closed = socket.destroyed ? Promise.resolve() : new Promise((done) => socket.once('close', done));
        void closed.then(() => {
          clearTimeout(bound);
          const json = /^application\/json/.test(answer.headers['content-type'] ?? '');
          resolve({ status: answer.statusCode!, body: json ? JSON.parse(text) : text, connection: answer.headers.connection, closedBySandbox: !timedOut });
        });
      });
    });
    // The server's close may cut the body still being written: the answer, or the bound, decides.
    req.on('error', () => undefined);
    req.write(first);
  });
}
