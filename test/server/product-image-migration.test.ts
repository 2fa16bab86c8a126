// Migration 011 on a data directory or database of an earlier version: each stored product image
// keeps its type, size, owner and time, gains the SHA-256 of its bytes, and its bytes are dropped.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../server/store/migrate.ts';
import { PNG } from './support/payment-link.ts';
import { STORES, storeBeforeMigration } from './support/stores.ts';

describe.each(STORES)('migration 011 on %s: product images of earlier versions', (kind) => {
  it('replaces each image’s bytes with their SHA-256 and keeps the rest', async () => {
    const { store, close } = await storeBeforeMigration(kind, '011');
    try {
      const images = [
        { id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', seller: '3fa85f64-5717-4562-b3fc-2c963f66afa6', content: PNG },
        { id: '9b2d5f4e-8c1a-4e7b-a3d6-5f0c2e8b1a47', seller: '0b6f4e7a-2c1d-4b8e-9f3a-5d6c7e8f9a0b', content: Buffer.concat([PNG, Buffer.alloc(1000, 7)]) },
      ];
      for (const image of images) {
        await store.query(
          `INSERT INTO product_images (image_id, seller_id, content_type, size_bytes, content, created_at) VALUES ($1, $2, 'image/png', $3, $4, '2026-11-20T10:00:00Z')`,
          [image.id, image.seller, image.content.length, image.content],
        );
      }

      expect(await migrate(store)).toEqual(['011', '012', '013']);

      const { rows } = await store.query<Record<string, unknown>>('SELECT image_id, seller_id, content_type, size_bytes, content_sha256 FROM product_images ORDER BY size_bytes');
      expect(rows).toEqual(
        images.map((image) => ({
          image_id: image.id,
          seller_id: image.seller,
          content_type: 'image/png',
          size_bytes: image.content.length,
          content_sha256: createHash('sha256').update(image.content).digest('hex'),
        })),
      );
      const columns = await store.query<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'product_images' ORDER BY ordinal_position`);
      expect(columns.rows.map((c) => c.column_name)).not.toContain('content');
      await expect(store.query(`UPDATE product_images SET content_sha256 = 'not hex' WHERE image_id = $1`, [images[0]!.id])).rejects.toThrow(/product_images_content_sha256_hex/);
    } finally {
      await close();
    }
  });
});
