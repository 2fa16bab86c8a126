// SQL of sandbox seller creation: the seller row (the seller's API client goes through the
// authentication repository, its business configuration through the payment link repository).
import type { Queryable } from '../../store/store.ts';
import type { SellerRow } from '../../payment-link/repository.ts';

export function sandboxSellerRepository(db: Queryable) {
  return {
    async insertSeller(seller: SellerRow & { recurrenceEnabled: boolean }): Promise<void> {
      const s = seller;
      await db.query(
        `INSERT INTO sellers (seller_id, merchant_id, seller_code, trade_name, email, country, currencies, services, payments, tenant, recurrence_enabled)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [s.sellerId, s.merchantId, s.sellerCode, s.tradeName, s.email, s.country, s.currencies, JSON.stringify(s.services), JSON.stringify(s.payments), s.tenant, s.recurrenceEnabled],
      );
    },
  };
}
