// Other spellings of one path (letter case, trailing slash, `//`, percent-encoding, `;` parameters,
// dot segments, backslashes): each would reach the same operation on a lenient router. The security
// suite probes them without credentials, the contract fuzzer with them.

/** Other spellings of one path, changing its `nth` literal segment (the first by default). */
export function spellingsOf(path: string, nth = 0): string[] {
  const segments = path.split('/').slice(1);
  const literal = segments.map((s, i) => (/^[a-z]/i.test(s) ? i : -1)).filter((i) => i >= 0)[nth] ?? -1;
  const last = segments.length - 1;
  const at = (i: number, spell: (s: string) => string) => '/' + segments.map((s, j) => (j === i ? spell(s) : s)).join('/');
  const encodeFirst = (s: string) => `%${s.charCodeAt(0).toString(16)}${s.slice(1)}`;
  const out = [
    path.toUpperCase(),
    at(literal, (s) => s[0]!.toUpperCase() + s.slice(1)),
    at(last, (s) => s.toUpperCase()),
    `${path}/`,
    `/${path}`,
    at(literal, (s) => `${s}/`),
    path.replace(/\//g, '//'),
    at(literal, encodeFirst),
    at(last, encodeFirst),
    at(literal, (s) => `%${s.charCodeAt(0).toString(16).toUpperCase()}${s.slice(1)}`),
    at(literal, (s) => `${s}%2F`).replace(/%2F\//, '%2F'),
    at(literal, (s) => `${s};x=1`),
    `${path};x=1`,
    at(literal, (s) => `${s}/.`),
    at(literal, (s) => `${s}/x/..`),
    at(literal, (s) => `${s}/%2e`),
    at(literal, (s) => `${s}/%2E%2E/${s}`),
    at(literal, (s) => `${s}\\`).replace(/\\\//, '\\'),
    `${path}%20`,
    `${path}%00`,
    `${path}/..;/`,
    `${path}#x`,
  ];
  return [...new Set(out)].filter((p) => p !== path);
}
