// The payment link area's own error rules: the product image upload's size limit and its 413, and
// the short-id lookup's 404 for a value that cannot name a link.
import { ApiError } from '../http/errors.ts';
import type { PaymentLinkErrorRules } from '../http/error-renderers.ts';

/** The multipart part of the upload that carries the image (the contract's ProductImageUpload). */
export const PRODUCT_IMAGE_FIELD = 'image';

/** The largest product image the upload accepts (5 MiB). */
export const PRODUCT_IMAGE_MAX_BYTES = 5 * 1024 * 1024;

export const IMAGE_UPLOAD = '/dpy/payment-link/v1/payment-links/products/images';

export const imageTooLarge = (headers: Record<string, string> = {}) =>
  new ApiError(413, 'image_too_large', `The image must not exceed 5 MiB (${PRODUCT_IMAGE_MAX_BYTES} bytes)`, [], headers);

export const SHORT_ID_LOOKUP = '/dpy/payment-link/v1/payment-links/by-short-id/{short_id}';

export const PAYMENT_LINK_NOT_FOUND = (headers: Record<string, string> = {}) => new ApiError(404, 'payment_link_not_found', 'Payment Link not found', [], headers);

export const PAYMENT_LINK_ERROR_RULES: PaymentLinkErrorRules = {
  // The upload's size limit is enforced by the validator's multer (app.ts): its 413 is image_too_large.
  tooLarge: [{ method: 'POST', path: IMAGE_UPLOAD, error: imageTooLarge }],
  // A short id the contract refuses (longer than 32, a control character) names no link: the lookup
  // documents no 400, so the validator's refusal of the path is its 404 (error-normalising.ts), the
  // lookup's own. Another refusal (an unknown query parameter) stays the area's plain 404.
  notFound: [{ method: 'GET', path: SHORT_ID_LOOKUP, error: PAYMENT_LINK_NOT_FOUND }],
};
