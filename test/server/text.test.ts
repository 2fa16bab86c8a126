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

it('names at most 20 pointers of at most 200 characters: a small body cannot make a huge refusal', () => {
  const leaves = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`k${i}`, '\u0001']));
  const many = notTextPointers(leaves);
  expect(many).toHaveLength(20);
  for (const pointer of many) expect(pointer).toMatch(/^\/k\d+$/);
  // Under a name cut short, the strings share its pointer: named once.
  expect(notTextPointers({ ['K'.repeat(100_000)]: leaves })).toEqual([`/${'K'.repeat(198)}…`]);
  expect(notTextPointers({ a: { b: '\u0000' }, ['x'.repeat(300)]: '\u0000' }).sort()).toEqual(['/a/b', `/${'x'.repeat(198)}…`].sort());
});
