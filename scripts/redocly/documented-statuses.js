// Redocly plugin of the project: `documented-statuses/shared-error-responses` keeps every status the
// reference server answers on every operation documented, once per area: every operation documents
// 429 (the rate limit, any call may meet it) and 500 (an unexpected failure), and, where it is
// secured, 401; and each 401, 429 and
// 500 is a `$ref` to a shared response of the area's `components/responses/`, never written inline.

const SHARED = ['401', '429', '500'];

function secured(requirements) {
  // `security: []` or an empty requirement `{}` makes the call public.
  return Array.isArray(requirements) && requirements.length > 0 && requirements.every((r) => Object.keys(r ?? {}).length > 0);
}

function sharedErrorResponses() {
  let rootSecurity;
  return {
    Root: {
      enter(root) {
        rootSecurity = root.security;
      },
    },
    // Under `paths` only: a webhook is a call the platform makes, not one the server answers.
    Paths: {
    Operation: {
      enter(operation, ctx) {
        const responses = operation.responses ?? {};
        const location = ctx.location.child('responses');
        const needed = ['429', '500'];
        if (secured(operation.security ?? rootSecurity)) needed.push('401');
        for (const code of needed) {
          if (!(code in responses)) {
            ctx.report({
              message: `the operation does not document ${code}: reference the area's shared response (components/responses/*${{ 429: 'TooManyRequests', 500: 'InternalError', 401: 'Unauthorized' }[code]}.yaml).`,
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
      },
    },
    },
  };
}

/**
 * `documented-statuses/rate-limit-fields`: every 2xx and 4xx answer documents the IETF `RateLimit`
 * and `RateLimit-Policy` fields, which the reference server writes on every answer that passed its
 * rate limiter. The one exception is 401 of a secured operation: the bearer token is checked before
 * the limiter (the limit is counted per client, and a refused token names none), so it has none.
 */
function rateLimitFields() {
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
          for (const [status, raw] of Object.entries(operation.responses ?? {})) {
            if (!/^[24]\d\d$/.test(status)) continue;
            if (status === '401' && secured(operation.security ?? rootSecurity)) continue;
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
        },
      },
    },
  };
}

export default function documentedStatuses() {
  return {
    id: 'documented-statuses',
    rules: { oas3: { 'shared-error-responses': sharedErrorResponses, 'rate-limit-fields': rateLimitFields } },
  };
}
