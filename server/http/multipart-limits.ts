// What a multipart body may carry besides its one kept file (the product image upload): the
// validator's multer keeps text parts in memory, by default any number of them of 1 MB each. Read by
// the validator's set-up (contract-validator.ts) and by the error that names a broken one
// (error-normalising.ts).

/**
 * multer's `limits` for text parts (at most 16, each at most 64 KiB), file parts (at most 8: the
 * first image part is kept, the others are read and dropped) and parts of any kind, those that are
 * neither (no `Content-Disposition`) included (32). Without the last two, 20 MB of 200,000 empty
 * file parts kept the event loop 3 s, and a chunked body of parts without a name was parsed for
 * the whole request timeout (attacker reviews, 2026-11-24).
 */
export const MULTIPART_LIMITS = { fields: 16, fieldSize: 64 * 1024, files: 8, parts: 32 } as const;

/**
 * The most bytes a multipart body may say it holds (Content-Length): the kept file, its text parts,
 * and 64 KiB of part headers and boundaries. A 300 MB body of dropped file parts was read whole.
 */
export const multipartBodyBytes = (maxFileBytes: number) => maxFileBytes + MULTIPART_LIMITS.fields * MULTIPART_LIMITS.fieldSize + 64 * 1024;

/** multer's messages for those limits (the validator passes them on as a 400), in the package's words. */
export const MULTIPART_LIMIT_MESSAGES: Readonly<Record<string, string>> = {
  'Too many fields': `The multipart form has more than ${MULTIPART_LIMITS.fields} text parts`,
  'Field value too long': `A text part of the multipart form is over ${MULTIPART_LIMITS.fieldSize / 1024} KiB`,
  'Too many files': `The multipart form has more than ${MULTIPART_LIMITS.files} file parts`,
  'Too many parts': `The multipart form has more than ${MULTIPART_LIMITS.parts} parts`,
};
