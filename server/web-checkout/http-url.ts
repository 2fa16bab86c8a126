// The rule of every URL of the technical configuration (the hosted page sends the customer to
// success_url or error_url, the server POSTs to notification.url): parsed as a browser parses it
// (WHATWG `new URL`), http or https, with a host.
export const NOT_AN_HTTP_URL = 'must be an absolute http or https URL';

/** The URL, or undefined when a browser could not follow it (`http://`, `http://%zz/`, `http://[::1/`, `ftp:`…). */
export function httpUrlOf(value: string): URL | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' ? url : undefined;
}
