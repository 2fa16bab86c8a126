/** The areas of the platform, in the order of the seed; each has a root at openapi/<area>/openapi.yaml. */
export const AREAS = [
  'authentication',
  'payment-link',
  'web-checkout',
  'subscription',
  'plan',
  'subscription-webhook',
  // Reference-only: the sandbox's own API, not part of the platform (see openapi/sandbox/).
  'sandbox',
] as const;
export type Area = (typeof AREAS)[number];

/** The tag that carries an area's introduction (its own `info`) in the joined bundle (scripts/generate.ts). */
export const introductionTag = (areaTitle: string) => `${areaTitle}: introduction`;
