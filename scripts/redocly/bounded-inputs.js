// Redocly plugin of the project: `bounded-inputs/request-fields-bounded` keeps unbounded request
// fields out of the contract. Every string a request carries (a body property or array item, a
// parameter) needs `maxLength`, every array `maxItems`, every integer or number `maximum`, on the
// field itself, on the schema it refers to, or on one of its `allOf` members; an `enum` or `const`
// bounds it too, and a `format: binary` file is bounded by the documented body size instead.
// Response-only schemas are not checked: the platform answers what it stored from bounded requests.

const BOUND = { string: 'maxLength', array: 'maxItems', integer: 'maximum', number: 'maximum' };

function resolved(node, resolve) {
  if (!node || typeof node !== 'object' || typeof node.$ref !== 'string') return node;
  return resolve(node).node ?? {};
}

/** The schema and what it brings along: itself, its $ref target, its allOf members (resolved, one level down). */
function layers(raw, resolve) {
  const own = [raw, resolved(raw, resolve)].filter((n) => n && typeof n === 'object');
  const members = own.flatMap((n) => (Array.isArray(n.allOf) ? n.allOf.map((m) => resolved(m, resolve)) : []));
  return [...own, ...members.flatMap((m) => [m, resolved(m, resolve)])].filter((n) => n && typeof n === 'object');
}

/** The keyword the field lacks (maxLength, maxItems, maximum), or undefined when it is bounded. */
export function missingBound(raw, resolve) {
  const all = layers(raw, resolve);
  if (all.some((n) => 'enum' in n || 'const' in n || n.format === 'binary')) return undefined;
  const types = all.flatMap((n) => (n.type === undefined ? [] : [].concat(n.type)));
  const needed = [...new Set(types.map((t) => BOUND[t]).filter(Boolean))];
  return needed.find((keyword) => !all.some((n) => keyword in n));
}

function check(raw, location, ctx, what) {
  const missing = missingBound(raw, ctx.resolve);
  if (missing) {
    ctx.report({
      message: `${what} is unbounded: give it \`${missing}\` (the seed's limit, or a package decision written in its description and the README's decisions table).`,
      location,
    });
  }
}

function requestFieldsBounded() {
  // Under `paths` only: a webhook's body is what the platform sends, not what it accepts.
  return {
    Paths: {
    Parameter: {
      leave(parameter, ctx) {
        if (parameter.schema) check(parameter.schema, ctx.location.child('schema'), ctx, `parameter \`${parameter.name}\``);
      },
    },
    RequestBody: {
      Schema: {
        enter(schema, ctx) {
          for (const [name, property] of Object.entries(schema.properties ?? {})) {
            check(property, ctx.location.child(['properties', name]), ctx, `request property \`${name}\``);
          }
          if (schema.items && typeof schema.items === 'object') check(schema.items, ctx.location.child('items'), ctx, 'request array item');
        },
      },
    },
    },
  };
}

export default function boundedInputs() {
  return {
    id: 'bounded-inputs',
    rules: { oas3: { 'request-fields-bounded': requestFieldsBounded } },
  };
}
