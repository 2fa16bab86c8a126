// The walk of the text guard (server/http/text.ts): JSON pointers of every string or member name that
// the store cannot hold, none for text however deep or wide, binary data not looked at.
import { expect, it } from 'vitest';
import { notTextPointers } from '../../server/http/text.ts';

it('answers no pointer for text, however nested, and for values that hold no string', () => {
  const text = { a: 'plain', b: ['é', { c: '😀 emoji', d: [1, true, null, 'tab\tand newline\n'] }], 'key with / and ~': 'x' };
  expect(notTextPointers(text)).toEqual([]);
  for (const value of [undefined, null, 42, '', [], {}, [[[]]]]) expect(notTextPointers(value)).toEqual([]);
});

it('points at each string that is not text, escaping member names, and at the object of a member name that is not', () => {
  const body = {
    ok: 'fine',
    'a/b': { 'c~d': ['x', 'nul\u0000'] },
    list: [{ deep: { deeper: 'bell\u0007' } }, 'lone \uD800 surrogate'],
    nested: { 'bad\u0001key': 'value', good: 'text' },
  };
  expect(notTextPointers(body).sort()).toEqual(['/a~1b/c~0d/1', '/list/0/deep/deeper', '/list/1', '/nested'].sort());
  expect(notTextPointers('\u001F')).toEqual(['']); // the value itself
  expect(notTextPointers({ x: 'a\u0000', y: { z: 'b\u0000' } }).sort()).toEqual(['/x', '/y/z']);
});

it('does not look inside binary data, and names each pointer once', () => {
  expect(notTextPointers({ file: Buffer.from([0, 1, 2]), bytes: new Uint8Array([0]) })).toEqual([]);
  expect(notTextPointers({ 'k\u0000': 'v\u0000' })).toEqual(['', '/k\u0000']);
});
