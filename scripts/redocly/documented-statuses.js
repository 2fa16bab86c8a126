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

export default function documentedStatuses() {
  return {
    id: 'documented-statuses',
    rules: { oas3: { 'shared-error-responses': sharedErrorResponses } },
  };
}
