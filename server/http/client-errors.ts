// What the server answers to a request that Node refuses before any application code runs: a
// request head over Node's 16 KiB (431), a head or a body that did not arrive within
// HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS (408), chunk extensions over 16 KiB (413), bytes that are
// not HTTP (400). Node's own answers have no body; these say why in one line of plain text, as the
// sandbox's other refusals before routing do (the Host check, the hosted pages' limit). Same rule as
// Node's own handler (lib/_http_server.js, socketOnError), which a `clientError` listener replaces:
// an answer only when nothing of a response was written to the connection yet, and the connection
// is destroyed either way.
import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';

const REASONS: Record<string, [status: number, text: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'The request line and headers are over 16 KiB: send a shorter URL, or fewer or shorter headers.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'The chunk extensions of the body are over 16 KiB.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request did not arrive in time (its headers, or its whole body): send it again.'],
};
const NOT_HTTP: [number, string] = [400, 'The request is not well-formed HTTP/1.1.'];

function answer(status: number, text: string): string {
  const body = `${text}\n`;
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: text/plain; charset=utf-8\r\n' +
    'X-Content-Type-Options: nosniff\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Cache-Control: no-store\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
      const [status, text] = REASONS[error.code ?? ''] ?? NOT_HTTP;
      // A few hundred bytes go to the kernel at once, as Node's own answer does before it destroys.
      socket.write(answer(status, text));
    }
    socket.destroy();
  });
}
