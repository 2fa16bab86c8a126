// Helpers of the payment link and sandbox seller suites: a server on the joined bundle, on PGlite or
// (when DATABASE_URL is set) on a fresh PostgreSQL schema; sellers, tokens, links and images.
import type { Store } from '../../../server/store/store.ts';

export { STORES } from './stores.ts';
import { ADMIN, type TestServer } from './server.ts';
import { tokenOf } from './sellers.ts';

export { mintToken } from './server.ts';

export const BASE = '/dpy/payment-link/v1';


/** A server enforcing the joined bundle on the given store kind. */

export interface SandboxSeller {
  sellerId: string;
  clientId: string;
  clientSecret: string;
  token: string;
  body: Record<string, any>;
}

/** Creates a seller through POST /sandbox/v1/sellers and gets a token for it. */
export async function createSeller(server: TestServer, overrides: Record<string, unknown> = {}): Promise<SandboxSeller> {
  const res = await server.http
    .post('/sandbox/v1/sellers')
    .set('Authorization', ADMIN)
    .send({ trade_name: 'Loja Teste', email: 'loja@example.com', country: 'BR', currencies: ['BRL'], ...overrides });
  if (res.status !== 201) throw new Error(`seller creation answered ${res.status}: ${JSON.stringify(res.body)}`);
  const { client_id, client_secret } = res.body.credentials;
  const token = await tokenOf(server, { clientId: client_id, clientSecret: client_secret });
  return { sellerId: res.body.seller.seller_id, clientId: client_id, clientSecret: client_secret, token, body: res.body };
}


export const product = (overrides: Record<string, unknown> = {}) => ({ product_type: 'service', title: 'Consultoria', amount: 10000, ...overrides });

/** Creates a link through POST /sandbox/v1/payment-links; answers its body. */
export async function createLink(server: TestServer, sellerId: string, overrides: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await server.http
    .post('/sandbox/v1/payment-links')
    .set('Authorization', ADMIN)
    .send({ seller_id: sellerId, label: 'Link', type: 'custom', products: [product()], ...overrides });
  if (res.status !== 201) throw new Error(`link creation answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Changes stored link columns directly (what no operation of the contract can do). */
export async function setLinkColumns(store: Store, linkId: string, columns: Record<string, unknown>): Promise<void> {
  const names = Object.keys(columns);
  const sets = names.map((name, i) => `${name} = $${i + 2}`).join(', ');
  await store.query(`UPDATE payment_links SET ${sets} WHERE link_id = $1`, [linkId, ...names.map((n) => columns[n])]);
}

export const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(56, 7)]);
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60, 1)]);
export const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x20, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(40, 3)]);
export const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(40, 2)]);

/** Uploads an image part; answers the response. */
export function upload(server: TestServer, token: string, content: Buffer, contentType: string, field = 'image') {
  return server.http
    .post(`${BASE}/payment-links/products/images`)
    .set('Authorization', `Bearer ${token}`)
    .attach(field, content, { filename: 'photo', contentType });
}
