// HTTP Basic credentials (RFC 7617) as the token endpoint and the input guard read them.

/** The client id and secret of an `Authorization: Basic` header (Base64 of `client_id:client_secret`). */
export function parseBasicCredentials(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
}

/** Whether the header names the Basic scheme at all, its credentials well formed or not (RFC 7617: the scheme is case-insensitive). */
export function usesBasicScheme(header: string | undefined): boolean {
  return header !== undefined && /^\s*basic(\s|$)/i.test(header);
}
