// HTTP ↔ domain for the payment link API. The bearer token is checked before this router, as the
// contract's security says (server/http/security.ts); every protected operation then goes through
// requireSellerGuid (the seed's guid_error, in one place). The short-id lookup is public.
import type { Request, RequestHandler } from 'express';
import type { AreaRoutes } from '../http/area-routes.ts';
import { accessTokenOf } from '../authentication/bearer.ts';
import { typedRouter } from '../http/typed-router.ts';
import { businessConfigurationBody, orderBody, paymentLinkBody, sellerBody } from './bodies.ts';
import { checkSellerGuid, paymentLinkService, type ListPaymentLinksQuery, type UploadedPart } from './service.ts';

const BASE = '/dpy/payment-link/v1';

/** 400 guid_error when the token's `x-seller-id` is not a GUID (after the bearer check). */
const requireSellerGuid: RequestHandler = (req, _res, next) => {
  checkSellerGuid(accessTokenOf(req).sellerId);
  next();
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any operation's typed request
const sellerOf = (req: Request<any, any, any, any>) => accessTokenOf(req as Request).sellerId;

export const paymentLinkRoutes: AreaRoutes = ({ store }) => {
  const service = paymentLinkService(store);
  const protectedCall = [requireSellerGuid];
  return typedRouter()
    .get(`${BASE}/sellers`, ...protectedCall, async (req, res) => {
      res.json(sellerBody(await service.getSeller(sellerOf(req))));
    })
    .get(`${BASE}/payment-links/business-configurations`, ...protectedCall, async (req, res) => {
      const { configuration, country } = await service.getBusinessConfiguration(sellerOf(req));
      res.json(businessConfigurationBody(configuration, country));
    })
    .get(`${BASE}/payment-links`, ...protectedCall, async (req, res) => {
      const { links, total } = await service.listPaymentLinks(sellerOf(req), req.query as unknown as ListPaymentLinksQuery);
      res.set('X-Total-Count', String(total)).json(links.map(paymentLinkBody));
    })
    .get(`${BASE}/payment-links/by-short-id/{short_id}`, async (req, res) => {
      res.json(paymentLinkBody(await service.getPaymentLinkByShortId(req.params.short_id)));
    })
    .get(`${BASE}/payment-links/{link_id}/orders/{order_id}`, ...protectedCall, async (req, res) => {
      res.json(orderBody(await service.getPaymentLinkOrder(sellerOf(req), req.params.link_id, req.params.order_id)));
    })
    .post(`${BASE}/payment-links/products/images`, ...protectedCall, async (req, res) => {
      // The validator's multer (memory storage, app.ts) leaves the parts in req.files.
      const parts = (req as unknown as { files?: UploadedPart[] }).files;
      const image = await service.uploadProductImage(sellerOf(req), parts);
      res.status(201).json({
        image_id: image.imageId,
        content_type: image.contentType,
        size_bytes: image.sizeBytes,
        created_at: image.createdAt.toISOString(),
      });
    }).router;
};
