// Text the platform stores: no control characters (PostgreSQL refuses NUL in text and jsonb; no
// platform text needs the others) and no unpaired UTF-16 surrogates (not Unicode: jsonb refuses
// them). The contract says it of every request string it describes (its shared Text schema); the
// guards (text-guard.ts, the hosted pages) say it of what the contract cannot describe.
import { MAX_PROBLEMS } from './errors.ts';

/** The pattern of the contract's Text schema (openapi/components/schemas/Text.yaml), as the validator quotes it. */
export const TEXT_PATTERN = String.raw`^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F]*$`;

/** What a problem says of a string that is not text (after its field's name). */
export const NOT_TEXT = 'must not contain control characters or unpaired surrogates';

const NOT_STORABLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]|\p{Cs}/u;

export const isText = (value: string) => !NOT_STORABLE.test(value);

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The most characters of a pointer a refusal names (a longer one is cut, ending in `…`); at most
 * MAX_PROBLEMS pointers are named. Unknown members are free, so a body of 116 KB (one member name
 * of 100 KB over 1,000 strings that are not text) was answered with 1,000 details each naming the
 * whole name, twice: 200 MB built in 7 s, and 500 KB ran the process out of memory (attacker
 * review, 2026-11-24).
 */
export const MAX_POINTER_LENGTH = 200;

/** A child's pointer, at most MAX_POINTER_LENGTH characters: once cut, the children of a pointer share it. */
const childPointer = (pointer: string, key: string) => {
  if (pointer.length >= MAX_POINTER_LENGTH) return pointer;
  const child = `${pointer}/${escapePointer(key.length > MAX_POINTER_LENGTH ? key.slice(0, MAX_POINTER_LENGTH) : key)}`;
  return child.length <= MAX_POINTER_LENGTH ? child : `${child.slice(0, MAX_POINTER_LENGTH - 1)}…`;
};

/**
 * JSON pointers, inside `value` (a parsed body, query or form), of the strings that are not text, the
 * first MAX_PROBLEMS distinct ones found; a member name that is not text points at its
 * object. Walked without recursion (bodies may nest deeply); binary data (an uploaded file) is not
 * text and not looked at.
 */
export function notTextPointers(value: unknown): string[] {
  if (allText(value)) return []; // nearly every request: no pointer built
  const found = new Set<string>();
  const pending: Array<[unknown, string]> = [[value, '']];
  for (let next = pending.pop(); next && found.size < MAX_PROBLEMS; next = pending.pop()) {
    const [item, pointer] = next;
    if (typeof item === 'string') {
      if (!isText(item)) found.add(pointer);
    } else if (item !== null && typeof item === 'object' && !ArrayBuffer.isView(item)) {
      for (const [key, child] of Object.entries(item)) {
        if (!isText(key)) found.add(pointer);
        pending.push([child, childPointer(pointer, key)]);
      }
    }
  }
  return [...found].slice(0, MAX_PROBLEMS);
}

/** Whether every string and member name inside `value` is text: notTextPointers' walk, without the pointers. */
function allText(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (!isText(item)) return false;
    } else if (item !== null && typeof item === 'object' && !ArrayBuffer.isView(item)) {
      for (const key of Object.keys(item)) {
        if (!isText(key)) return false;
        pending.push((item as Record<string, unknown>)[key]);
      }
    }
  }
  return true;
}
