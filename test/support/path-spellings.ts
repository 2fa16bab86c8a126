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

/** Whether a path (with `{...}` placeholders) is one of `templates`, whatever values their parameters take. */
function namesAPath(path: string, templates: string[]): boolean {
  const segments = path.split('/');
  return templates.some((t) => {
    const parts = t.split('/');
    return parts.length === segments.length && parts.every((part, i) => part === segments[i] || (/^\{.+\}$/.test(part) && segments[i] !== ''));
  });
}

/**
 * Other spellings of an operation's path template in which every `{parameter}` is still a whole
 * segment (`/{id}%20` would be another value of the parameter, not another spelling of the path),
 * and which name no path of the contract (`/subscriptions/.` is the path of one subscription).
 */
export function templateSpellingsOf(template: string, templates: string[]): string[] {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const numbered = names.reduce((t, name, i) => t.replace(`{${name}}`, `{${i}}`), template);
  const literals = numbered.split('/').filter((s) => /^[a-z]/i.test(s)).length;
  return [...new Set(Array.from({ length: literals }, (_, nth) => spellingsOf(numbered, nth)).flat())]
    .filter((spelled) => names.every((_, i) => new RegExp(`/\\{${i}\\}(/|$)`).test(spelled)))
    .filter((spelled) => !namesAPath(spelled, templates))
    .map((spelled) => names.reduce((t, name, i) => t.replace(`{${i}}`, `{${name}}`), spelled));
}
