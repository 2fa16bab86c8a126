// What a multipart body may carry besides its one kept file (the product image upload): the
// validator's multer keeps text parts in memory, by default any number of them of 1 MB each. Read by
// the validator's set-up (contract-validator.ts) and by the error that names a broken one
// (error-normalising.ts).

/** multer's `limits` for text parts: at most 16, each at most 64 KiB. */
export const MULTIPART_LIMITS = { fields: 16, fieldSize: 64 * 1024 } as const;

/** multer's messages for those limits (the validator passes them on as a 400), in the package's words. */
export const MULTIPART_LIMIT_MESSAGES: Readonly<Record<string, string>> = {
  'Too many fields': `The multipart form has more than ${MULTIPART_LIMITS.fields} text parts`,
  'Field value too long': `A text part of the multipart form is over ${MULTIPART_LIMITS.fieldSize / 1024} KiB`,
};
