// One HTTP request on the raw socket: the path goes out exactly as given (an HTTP client such as
// fetch would normalise dot segments and percent-encoding before sending).
import { Agent, request } from 'node:http';

export interface RawRequest {
  method: string;
  /** The request target as sent: `/a/./b;x=1%00` stays so. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface RawAnswer {
  status: number;
  /** The media type of the answer, without parameters. */
  contentType: string;
  text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export function rawRequest(baseUrl: string, req: RawRequest, timeoutMs = 15_000, retried = false): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise<RawAnswer>((resolve, reject) => {
    const outgoing = request({ host: hostname, port, method: req.method, path: req.path, headers: req.headers, agent, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: (res.headers['content-type'] ?? '').split(';')[0]!.trim(), text }));
      res.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    // A server may answer (413, 400) and close before it has read the whole body: the answer counts.
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed just before this request: sent again once, on a new one.
      if (outgoing.reusedSocket && error.code === 'ECONNRESET' && !retried) resolve(rawRequest(baseUrl, req, timeoutMs, true));
      else reject(error);
    });
    outgoing.end(req.method === 'GET' || req.method === 'HEAD' ? undefined : req.body);
  });
}
