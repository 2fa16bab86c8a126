// Redocly plugin of the project, two rules over the operations the reference server answers:
// - `documented-statuses/shared-error-responses`: every status the server answers is documented,
//   once per area: every operation documents 429 (the rate limit, any call may meet it) and 500
//   (an unexpected failure), and, where it is secured, 401; each 401, 429 and 500 is a `$ref` to a
//   shared response of the area's `components/responses/`, never written inline.
// - `documented-statuses/rate-limit-fields`: every 2xx and 4xx answer documents the IETF `RateLimit`
//   and `RateLimit-Policy` fields, which the server writes on every answer that passed its rate
//   limiter. The one exception is 401 of a secured operation: the bearer token is checked before the
//   limiter (the limit is counted per client, and a refused token names none), so it has none.

const SHARED = ['401', '429', '500'];
const SHARED_NAME = { 401: 'Unauthorized', 429: 'TooManyRequests', 500: 'InternalError' };

function secured(requirements) {
  // `security: []` or an empty requirement `{}` makes the call public.
  return Array.isArray(requirements) && requirements.length > 0 && requirements.every((r) => Object.keys(r ?? {}).length > 0);
}

/**
 * A rule that visits every operation under `paths` (a webhook is a call the platform makes, not one
 * the server answers), told whether the operation is secured (its own `security`, else the root's).
 */
function onServedOperations(check) {
  return () => {
    let rootSecurity;
    return {
      Root: {
        enter(root) {
          rootSecurity = root.security;
        },
      },
      Paths: {
        Operation: {
          enter(operation, ctx) {
            check(operation, ctx, secured(operation.security ?? rootSecurity));
          },
        },
      },
    };
  };
}

const sharedErrorResponses = onServedOperations((operation, ctx, isSecured) => {
  const responses = operation.responses ?? {};
  const location = ctx.location.child('responses');
  const needed = isSecured ? ['429', '500', '401'] : ['429', '500'];
  for (const code of needed) {
    if (!(code in responses)) {
      ctx.report({
        message: `the operation does not document ${code}: reference the area's shared response (components/responses/*${SHARED_NAME[code]}.yaml).`,
        location: location.key(),
      });
    }
  }
  for (const code of SHARED) {
    const response = responses[code];
    if (response && typeof response.$ref !== 'string') {
      ctx.report({
        message: `${code} is written inline: reference the area's shared response in components/responses/ instead.`,
        location: location.child(code),
      });
    }
  }
});

const rateLimitFields = onServedOperations((operation, ctx, isSecured) => {
  for (const [status, raw] of Object.entries(operation.responses ?? {})) {
    if (!/^[24]\d\d$/.test(status)) continue;
    if (status === '401' && isSecured) continue;
    const { node: response, location } = raw && typeof raw.$ref === 'string' ? ctx.resolve(raw) : { node: raw, location: undefined };
    const names = Object.keys(response?.headers ?? {}).map((n) => n.toLowerCase());
    const missing = ['RateLimit', 'RateLimit-Policy'].filter((h) => !names.includes(h.toLowerCase()));
    if (missing.length) {
      ctx.report({
        message: `${status} does not document ${missing.join(' and ')}: the server sends them on every 2xx and 4xx (components/headers/RateLimit*.yaml).`,
        location: location ?? ctx.location.child(['responses', status]),
      });
    }
  }
});

export default function documentedStatuses() {
  return {
    id: 'documented-statuses',
    rules: { oas3: { 'shared-error-responses': sharedErrorResponses, 'rate-limit-fields': rateLimitFields } },
  };
}
