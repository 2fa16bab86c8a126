// The rules of the payment link area, each in one named function. The request's shape (types,
// enums, ranges, formats) is checked by the validator against the contract before we get here.
import { createHash, randomInt, randomUUID } from 'node:crypto';
import { isGuid, sellerGuidError } from '../authentication/bearer.ts';
import { ApiError } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import { imageTooLarge, PAYMENT_LINK_NOT_FOUND, PRODUCT_IMAGE_FIELD, PRODUCT_IMAGE_MAX_BYTES } from './errors.ts';
import type { PaymentMethodKey } from './payment-methods.ts';
import {
  paymentLinkRepository,
  type LinkListFilter,
  type LinkListPage,
  type LinkSort,
  type LinkStatus,
  type ProductImageRow,
} from './repository.ts';

const SELLER_NOT_FOUND = () => new ApiError(404, 'seller_not_found', 'Seller not found');

/** Seed: a seller id (`x-seller-id` of the token) that is not a GUID answers 400 guid_error. */
export function checkSellerGuid(sellerId: string): void {
  if (isGuid(sellerId)) return;
  throw sellerGuidError('x-seller-id must be a valid GUID');
}

/**
 * Case folding of the `title` filter and the `label` sort, done here rather than by SQL `lower()`,
 * whose folding depends on the database's locale. Per code point, so that one character stays one
 * (close to Unicode simple case folding); final sigma folds like sigma.
 */
export function foldCase(text: string): string {
  let folded = '';
  for (const char of text) {
    const lower = char.toLowerCase();
    folded += [...lower].length === 1 ? lower : char;
  }
  return folded.replace(/ς/g, 'σ');
}

const SHORT_ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** A new public short id: 8 characters of `[A-Za-z0-9]` (uniqueness is the insert's job). */
export function newShortId(): string {
  return Array.from({ length: 8 }, () => SHORT_ID_ALPHABET[randomInt(SHORT_ID_ALPHABET.length)]).join('');
}

// ---- listPaymentLinks ----

export interface ListPaymentLinksQuery {
  page?: number | string;
  limit?: number | string;
  sort?: LinkSort;
  sort_type?: 'asc' | 'desc';
  status?: LinkStatus;
  payment_type?: PaymentMethodKey;
  created_at_start?: string;
  created_at_end?: string;
  expiration_start?: string;
  expiration_end?: string;
  title?: string;
}

function instant(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  // The validator checked the RFC 3339 form; this catches what parses there but names no instant.
  if (Number.isNaN(date.getTime())) {
    throw new ApiError(400, 'invalid_request', 'One or more query parameters are invalid', [
      { location: 'query', pointer: `/${name}`, message: `${name} must be an RFC 3339 date-time with an offset` },
    ]);
  }
  return date;
}

/** 422 invalid_date_range when a range's start is not before its end (both given). */
export function checkDateRange(start: Date | undefined, end: Date | undefined, names: [string, string]): void {
  if (start && end && start.getTime() >= end.getTime()) {
    throw new ApiError(422, 'invalid_date_range', `${names[0]} must be before ${names[1]}`);
  }
}

/** The list's query as a filter and a page, with the contract's defaults (page 1, limit 10, created_at desc). */
export function listQuery(query: ListPaymentLinksQuery): { filter: LinkListFilter; page: LinkListPage } {
  const filter: LinkListFilter = {
    status: query.status,
    paymentType: query.payment_type,
    createdAtStart: instant(query.created_at_start, 'created_at_start'),
    createdAtEnd: instant(query.created_at_end, 'created_at_end'),
    expirationStart: instant(query.expiration_start, 'expiration_start'),
    expirationEnd: instant(query.expiration_end, 'expiration_end'),
    titleFolded: query.title === undefined ? undefined : foldCase(query.title),
  };
  checkDateRange(filter.createdAtStart, filter.createdAtEnd, ['created_at_start', 'created_at_end']);
  checkDateRange(filter.expirationStart, filter.expirationEnd, ['expiration_start', 'expiration_end']);
  const limit = Number(query.limit ?? 10);
  const pageNumber = Number(query.page ?? 1);
  return {
    filter,
    page: { sort: query.sort ?? 'created_at', direction: query.sort_type ?? 'desc', limit, offset: (pageNumber - 1) * limit },
  };
}

// ---- uploadProductImage ----

export type ImageType = ProductImageRow['contentType'];

/** The image type named by the content's magic bytes, if PNG, JPEG or WebP. */
export function detectImageType(bytes: Uint8Array): ImageType | undefined {
  const starts = (signature: number[], at = 0) => signature.every((byte, i) => bytes[at + i] === byte);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp'; // RIFF....WEBP
  return undefined;
}

export interface UploadedPart {
  fieldname: string;
  mimetype: string;
  size: number;
  buffer: Buffer;
}

const IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp'];
const UNSUPPORTED_IMAGE = 'The image must be image/png, image/jpeg or image/webp';

/**
 * The `image` part as a storable image: 400 when missing or empty, 413 over 5 MiB, 415 when its
 * Content-Type is not PNG, JPEG or WebP or does not match its magic bytes.
 */
export function checkProductImage(parts: UploadedPart[] | undefined): { contentType: ImageType; content: Buffer } {
  const part = parts?.find((p) => p.fieldname === PRODUCT_IMAGE_FIELD);
  const problem = (message: string) => [{ location: 'body' as const, pointer: '/image', message }];
  if (!part) throw new ApiError(400, 'invalid_request', 'The request body is invalid', problem('image is required (a file part)'));
  if (part.size === 0) throw new ApiError(400, 'invalid_request', 'The request body is invalid', problem('image must not be empty'));
  if (part.size > PRODUCT_IMAGE_MAX_BYTES) throw imageTooLarge();
  const declared = part.mimetype.split(';')[0]!.trim().toLowerCase();
  if (!IMAGE_TYPES.includes(declared)) throw new ApiError(415, 'unsupported_media_type', UNSUPPORTED_IMAGE);
  const detected = detectImageType(part.buffer);
  if (detected !== declared) {
    throw new ApiError(415, 'unsupported_media_type', `The image content is not ${declared}: ${UNSUPPORTED_IMAGE}`);
  }
  return { contentType: detected, content: part.buffer };
}

// ---- the operations ----

export function paymentLinkService(store: Store, now: () => Date = () => new Date()) {
  const repository = paymentLinkRepository(store);

  async function sellerOf(sellerId: string) {
    const seller = await repository.findSeller(sellerId);
    if (!seller) throw SELLER_NOT_FOUND();
    return seller;
  }

  return {
    getSeller: sellerOf,

    async getBusinessConfiguration(sellerId: string) {
      const seller = await sellerOf(sellerId);
      const configuration = await repository.findBusinessConfiguration(sellerId);
      if (!configuration) throw new ApiError(404, 'business_configuration_not_found', 'Business configuration not found');
      return { configuration, country: seller.country };
    },

    async listPaymentLinks(sellerId: string, query: ListPaymentLinksQuery) {
      const { filter, page } = listQuery(query);
      return repository.listPaymentLinks(sellerId, filter, page, now());
    },

    /** Public: any seller, any status. */
    async getPaymentLinkByShortId(shortId: string) {
      const link = await repository.findPaymentLinkByShortId(shortId, now());
      if (!link) throw PAYMENT_LINK_NOT_FOUND();
      return link;
    },

    /** Another seller's link is unknown; an order of another link is unknown. */
    async getPaymentLinkOrder(sellerId: string, linkId: string, orderId: string) {
      const link = await repository.findPaymentLink(sellerId, linkId, now());
      if (!link) throw PAYMENT_LINK_NOT_FOUND();
      const order = await repository.findOrder(link.linkId, orderId);
      if (!order) throw new ApiError(404, 'order_not_found', 'Order not found');
      return order;
    },

    async uploadProductImage(sellerId: string, parts: UploadedPart[] | undefined): Promise<ProductImageRow> {
      const { contentType, content } = checkProductImage(parts);
      // Kept: what the image is and its digest; its bytes are not stored (nothing reads them back).
      const contentSha256 = createHash('sha256').update(content).digest('hex');
      const image = { imageId: randomUUID(), sellerId, contentType, sizeBytes: content.length, contentSha256, createdAt: now() };
      await repository.insertProductImage(image);
      return { imageId: image.imageId, contentType, sizeBytes: image.sizeBytes, createdAt: image.createdAt };
    },
  };
}

export type PaymentLinkService = ReturnType<typeof paymentLinkService>;
