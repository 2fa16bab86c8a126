// Bytes and text the way every JavaScript runtime has them (Node, browsers, edge runtimes, Deno,
// Bun): no module of the client may need Node's Buffer or node:crypto, so that it bundles for a
// browser or an edge runtime as it is (a browser build of the root entry failed on node:crypto).
const encoder = new TextEncoder();
/** Invalid UTF-8 becomes U+FFFD, as Buffer's toString('utf8') does. */
const decoder = new TextDecoder();

export const utf8 = (text: string): Uint8Array => encoder.encode(text);
export const textOf = (bytes: Uint8Array): string => decoder.decode(bytes);

/** Base64 of the UTF-8 bytes of `text` (the credentials of a Basic header). */
export function base64OfText(text: string): string {
  let binary = '';
  for (const byte of utf8(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The UTF-8 text of base64 (or base64url, padded or not); '' when it is not base64. */
export function textOfBase64(value: string): string {
  const standard = value.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  try {
    const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4));
    return textOf(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return '';
  }
}

/** The chunks as one array of `size` bytes (their total). */
export function concatBytes(chunks: Uint8Array[], size: number): Uint8Array {
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

/**
 * Whether `given` is `expected`, in a time that depends on the length of `expected` only: every
 * byte of it is compared with a byte of `given` (read in place, cycling), whatever `given` is, so
 * how much of a secret a guess matched, and how long the guess is, do not show in the time taken. Written here because
 * node:crypto's timingSafeEqual exists in Node only and Web Crypto has no comparison (its digests
 * are asynchronous, which would make the synchronous check asynchronous).
 */
export function sameSecret(given: string, expected: string): boolean {
  const theirs = given === '' ? new Uint8Array(1) : utf8(given);
  const ours = utf8(expected);
  let difference = (given === '' ? 1 : 0) | (theirs.length ^ ours.length);
  for (let i = 0; i < ours.length; i++) difference |= ours[i]! ^ theirs[i % theirs.length]!;
  return difference === 0;
}
