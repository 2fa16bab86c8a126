// A token request in flight for a while, for the tests of a stop: its body is sent in two parts,
// `pauseMs` apart, and `onHeadersSent` is called halfway.
import { request as httpRequest } from 'node:http';
import { tokenForm } from './server.ts';

export function slowTokenRequestTo(base: string, onHeadersSent: () => void, pauseMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/authentication/oauth2/-core/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(new URLSearchParams(tokenForm()).toString())), expect: '100-continue' },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    const form = new URLSearchParams(tokenForm()).toString();
    // Timed from 100 Continue, which the sandbox sends once the request reached the app and its body
    // is about to be read: a loaded machine may take a while to read the head.
    // (once: a server without the sandbox's checkContinue listener, startTestServer's, sends Node's own 100 as well)
    req.once('continue', () => {
      req.write(form.slice(0, 10));
      setTimeout(onHeadersSent, pauseMs / 2);
      setTimeout(() => req.end(form.slice(10)), pauseMs);
    });
    req.flushHeaders();
  });
}
