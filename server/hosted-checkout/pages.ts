// The hosted pages' HTML: server-rendered, every value escaped, no external asset (styles inline,
// one small inline script allowed by a per-response nonce). The script checks the card number
// (Luhn) before posting and reports what the notification's `frontend` carries; the server checks again.
import { currencyDecimals, formatMoney } from '@payment-platform/contract/money';
import type { StoredTechnicalConfiguration } from '../web-checkout/repository.ts';
import { METHOD_LABELS, type CheckoutMethod, type InstallmentOption } from './payment-methods.ts';

export const escapeHtml = (value: unknown) =>
  String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const LOCALES: Record<string, string> = { BR: 'pt-BR', MX: 'es-MX', AR: 'es-AR', CL: 'es-CL', ES: 'es-ES', UY: 'es-UY' };
export const localeOf = (country: string) => LOCALES[country] ?? 'en';

/** The contract's type faces, with local fallbacks (no web font is downloaded). */
const FONT_STACKS: Record<string, string> = {
  'Platform Micro Text': 'system-ui, -apple-system, "Segoe UI", sans-serif',
  'Open Sans': '"Open Sans", "Segoe UI", system-ui, sans-serif',
  Montserrat: 'Montserrat, "Segoe UI", system-ui, sans-serif',
  Roboto: 'Roboto, "Segoe UI", system-ui, sans-serif',
};
const colour = (value: string, fallback: string) => (/^#[0-9a-fA-F]{6}$/.test(value) ? value : fallback);

export interface Layout {
  primary: string;
  accent: string;
  fontStack: string;
}
export function layoutOf(c: Pick<StoredTechnicalConfiguration, 'primaryColor' | 'accentColor' | 'typeFace'>): Layout {
  return { primary: colour(c.primaryColor, '#0B3B8C'), accent: colour(c.accentColor, '#F5A623'), fontStack: FONT_STACKS[c.typeFace] ?? FONT_STACKS['Platform Micro Text']! };
}

/**
 * The page's Content-Security-Policy: nothing from outside, the one inline script by nonce, and,
 * where the form's answer stays on the sandbox (a link's page, an intent without success and error
 * URLs, the message pages), forms sent only to the sandbox (`form-action 'self'`). A page whose
 * answer is a 303 to the merchant (`redirects`) has no `form-action`: browsers apply it to every
 * redirect that follows the post, the merchant's own included (http to https, apex to www), and
 * Chromium cannot even spell an IPv6 origin in it, so the customer, already charged, would be stopped.
 */
export function contentSecurityPolicy(nonce: string, redirects = false): string {
  const formAction = redirects ? '' : "; form-action 'self'";
  return `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'${formAction}`;
}

function shell(p: { title: string; layout: Layout; body: string; nonce?: string; script?: string }): string {
  const { primary, accent, fontStack } = p.layout;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title>
<style>
:root{--primary:${primary};--accent:${accent}}
*{box-sizing:border-box}body{margin:0;font-family:${fontStack};background:#f3f4f7;color:#1d2330}
header{background:var(--primary);color:#fff;padding:18px 24px;font-size:20px;font-weight:600}
header small{display:block;font-size:12px;font-weight:400;opacity:.8}
main{max-width:880px;margin:24px auto;padding:0 16px;display:grid;grid-template-columns:1fr 1.2fr;gap:20px}
@media (max-width:720px){main{grid-template-columns:1fr}}
section{align-self:start;background:#fff;border-radius:10px;padding:20px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h2{margin:0 0 12px;font-size:16px;color:var(--primary)}
table{width:100%;border-collapse:collapse}td{padding:6px 0;border-bottom:1px solid #eee;vertical-align:top}td.amount{text-align:right;white-space:nowrap}
tr.total td{font-weight:700;border-bottom:none;font-size:18px;padding-top:12px}
label{display:block;font-size:13px;margin:10px 0 4px;color:#4a5163}
input,select{width:100%;padding:10px;border:1px solid #cfd3dc;border-radius:6px;font:inherit}
.row{display:flex;gap:10px}.row>div{flex:1}
.methods{display:flex;flex-wrap:wrap;gap:8px}.methods label{flex:1;min-width:120px;margin:0;border:1px solid #cfd3dc;border-radius:6px;padding:10px;cursor:pointer;color:#1d2330}
.methods input{width:auto;margin-right:6px}
button{margin-top:18px;width:100%;padding:14px;border:0;border-radius:6px;background:var(--primary);color:#fff;font:inherit;font-size:16px;font-weight:600;cursor:pointer}
.badge{display:inline-block;background:var(--accent);color:#1d2330;border-radius:4px;padding:1px 6px;font-size:12px}
.error{background:#fdecea;color:#8a1f11;border-radius:6px;padding:10px;margin-bottom:10px}
.message{grid-column:1/-1;text-align:center}
.hidden{display:none}
footer{text-align:center;font-size:12px;color:#7a8194;margin:12px 0 24px}
</style></head>
<body>${p.body}
<footer>Reference sandbox hosted checkout · no real payment is made</footer>
${p.script && p.nonce ? `<script nonce="${escapeHtml(p.nonce)}">${p.script}</script>` : ''}
</body></html>`;
}

export interface OrderLine {
  title: string;
  quantity: number;
  amount: number;
}

export interface CheckoutPageModel {
  tradeName: string;
  layout: Layout;
  country: string;
  currency: string;
  lines: OrderLine[];
  shippingAmount?: number;
  total: number;
  /** Card verification: nothing is charged. */
  verification?: boolean;
  methods: CheckoutMethod[];
  installments: InstallmentOption[];
  action: string;
  error?: string;
  /** Link pages: the buyer's details (and delivery address when the link asks for it). */
  buyer?: { documentTypes: readonly string[]; deliveryAddress: boolean; values: Record<string, unknown> };
  nonce: string;
  /** The form's answer redirects the browser to the merchant (not shown: the page's `form-action`). */
  redirects?: boolean;
}

const input = (name: string, label: string, values: Record<string, unknown>, attrs = '') =>
  `<div><label for="${name}">${escapeHtml(label)}</label><input id="${name}" name="${name}" value="${escapeHtml(values[name] ?? '')}" ${attrs}></div>`;

function buyerFields(buyer: NonNullable<CheckoutPageModel['buyer']>): string {
  const v = buyer.values;
  const address = (prefix: string) => `
    <div class="row">${input(`${prefix}street`, 'Street', v, 'required maxlength="60"')}${input(`${prefix}number`, 'Number', v, 'required maxlength="10"')}</div>
    <div class="row">${input(`${prefix}complement`, 'Complement', v, 'maxlength="60"')}${input(`${prefix}district`, 'District', v, 'maxlength="40"')}</div>
    <div class="row">${input(`${prefix}city`, 'City', v, 'maxlength="40"')}${input(`${prefix}state`, 'State', v, 'maxlength="20"')}${input(`${prefix}postal_code`, 'Postal code', v, 'required maxlength="9"')}</div>`;
  const types = buyer.documentTypes.map((t) => `<option${v.document_type === t ? ' selected' : ''}>${escapeHtml(t)}</option>`).join('');
  return `<h2>Your details</h2>
    <div class="row">${input('first_name', 'First name', v, 'required autocomplete="given-name"')}${input('last_name', 'Last name', v, 'required autocomplete="family-name"')}</div>
    ${input('email', 'E-mail', v, 'required type="email" autocomplete="email"')}
    <div class="row"><div><label for="document_type">Document</label><select id="document_type" name="document_type">${types}</select></div>${input('document_number', 'Document number', v, 'required')}</div>
    ${input('phone_number', 'Phone', v, 'autocomplete="tel"')}
    <h2 style="margin-top:16px">Billing address</h2>${address('')}
    ${buyer.deliveryAddress ? `<h2 style="margin-top:16px">Delivery address</h2>${address('delivery_')}` : ''}`;
}

function installmentLabel(o: InstallmentOption, total: number, currency: string, locale: string): string {
  const charged = o.rate ? Math.round((total * (100 + o.rate)) / 100) : total;
  // Per-installment amount for display; rounded to the currency's smallest shown unit (a whole
  // unit, 100 on the wire, for every currency without cents: the money module's rule).
  const step = currencyDecimals(currency) === 0 ? 100 : 1;
  const each = Math.round(charged / o.number / step) * step;
  const kind = o.rate ? `with ${o.rate}% surcharge` : o.type === 'with_interest' ? 'with interest' : 'no interest';
  return `${o.number}× ${formatMoney(each, currency, locale)} (${kind})`;
}

export function checkoutPage(m: CheckoutPageModel): string {
  const locale = localeOf(m.country);
  const money = (amount: number) => escapeHtml(formatMoney(amount, m.currency, locale));
  const lines = m.lines
    .map((l) => `<tr><td>${escapeHtml(l.title)}${l.quantity > 1 ? ` × ${l.quantity}` : ''}</td><td class="amount">${money(l.amount * l.quantity)}</td></tr>`)
    .join('');
  // A card verification shows no amounts: none is formatted (a stored one its currency cannot carry would throw).
  const shipping = !m.verification && m.shippingAmount ? `<tr><td>Shipping</td><td class="amount">${money(m.shippingAmount)}</td></tr>` : '';
  const methods = m.methods
    .map((method, i) => `<label><input type="radio" name="method" value="${method}"${i === 0 ? ' checked' : ''}>${escapeHtml(METHOD_LABELS[method])}</label>`)
    .join('');
  const options = m.installments.map((o) => `<option value="${o.number}">${escapeHtml(installmentLabel(o, m.total, m.currency, locale))}</option>`).join('');
  const payLabel = m.verification ? 'Verify card' : `Pay ${formatMoney(m.total, m.currency, locale)}`;
  const body = `<header>${escapeHtml(m.tradeName)}<small>Secure checkout</small></header>
<main>
<section aria-label="Order summary"><h2>Order summary</h2>
${m.verification ? '<p>Your card will be verified and saved for later payments. Nothing is charged now.</p>' : `<table>${lines}${shipping}<tr class="total"><td>Total</td><td class="amount" id="total">${money(m.total)}</td></tr></table>`}
</section>
<section aria-label="Payment"><form method="post" action="${escapeHtml(m.action)}" id="pay" novalidate>
<div id="form-error" class="error${m.error ? '' : ' hidden'}" role="alert">${escapeHtml(m.error ?? '')}</div>
${m.buyer ? buyerFields(m.buyer) : ''}
<h2${m.buyer ? ' style="margin-top:16px"' : ''}>Payment method</h2>
<div class="methods" id="methods">${methods}</div>
<div id="wallet-note" class="hidden"><p>The sandbox wallet pays with its own approved test card.</p></div>
<div id="card-fields">
<label for="card_number">Card number</label><input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" maxlength="23" placeholder="0000 0000 0000 0000">
<label for="cardholder_name">Name on the card</label><input id="cardholder_name" name="cardholder_name" autocomplete="cc-name">
<div class="row"><div><label for="expiry">Expiry (MM/YY)</label><input id="expiry" name="expiry" autocomplete="cc-exp" placeholder="MM/YY" maxlength="7"></div>
<div><label for="security_code">Security code</label><input id="security_code" name="security_code" inputmode="numeric" autocomplete="cc-csc" maxlength="4"></div></div>
${!m.verification && options ? `<div id="installments-field"><label for="installments">Installments</label><select id="installments" name="installments"><option value="1">1× ${money(m.total)} (full payment)</option>${options}</select></div>` : ''}
</div>
<input type="hidden" name="time_page" id="time_page"><input type="hidden" name="card_pasted" id="card_pasted" value="false">
<input type="hidden" name="timezone" id="timezone"><input type="hidden" name="locale" id="locale">
<button type="submit" id="pay-button">${escapeHtml(payLabel)}</button>
${m.verification ? '' : '<p style="font-size:12px;color:#7a8194">Installment amounts are shown as configured by the seller; the card issuer applies interest and surcharges.</p>'}
</form></section>
</main>`;
  return shell({ title: `${m.tradeName} · Checkout`, layout: m.layout, body, nonce: m.nonce, script: PAGE_SCRIPT });
}

/** Luhn before posting, card fields only for card methods, installments only for credit, frontend facts. */
const PAGE_SCRIPT = `(() => {
  const started = Date.now();
  const $ = (id) => document.getElementById(id);
  const form = $('pay');
  const luhn = (n) => { if (!/^[0-9]{12,19}$/.test(n)) return false; let s = 0; for (let i = 0; i < n.length; i++) { let d = +n[n.length - 1 - i]; if (i % 2) { d *= 2; if (d > 9) d -= 9; } s += d; } return s % 10 === 0; };
  const method = () => (form.querySelector('input[name=method]:checked') || {}).value;
  const wallets = ['google_pay', 'apple_pay', 'c2p_master'];
  const sync = () => {
    const wallet = wallets.includes(method());
    $('card-fields').classList.toggle('hidden', wallet);
    $('wallet-note').classList.toggle('hidden', !wallet);
    if ($('installments-field')) $('installments-field').classList.toggle('hidden', method() !== 'credit');
  };
  form.addEventListener('change', sync); sync();
  $('card_number').addEventListener('paste', () => { $('card_pasted').value = 'true'; });
  form.addEventListener('submit', (event) => {
    const error = $('form-error');
    if (!wallets.includes(method())) {
      const number = $('card_number').value.replace(/[\\s-]/g, '');
      if (!luhn(number)) { event.preventDefault(); error.textContent = 'The card number is not valid: check the digits.'; error.classList.remove('hidden'); $('card_number').focus(); return; }
    }
    $('time_page').value = String(Math.round((Date.now() - started) / 1000));
    try { $('timezone').value = Intl.DateTimeFormat().resolvedOptions().timeZone || ''; } catch (e) {}
    $('locale').value = navigator.language || '';
    $('pay-button').disabled = true;
  });
})();`;

/** A page with one message: result, expired, already paid, unknown. */
export function messagePage(p: { title: string; heading: string; text: string; layout: Layout; tradeName?: string; link?: { href: string; label: string } }): string {
  const body = `<header>${escapeHtml(p.tradeName ?? 'Checkout')}<small>Secure checkout</small></header>
<main><section class="message"><h2 id="heading">${escapeHtml(p.heading)}</h2><p id="message">${escapeHtml(p.text)}</p>
${p.link ? `<p><a href="${escapeHtml(p.link.href)}">${escapeHtml(p.link.label)}</a></p>` : ''}</section></main>`;
  return shell({ title: p.title, layout: p.layout, body });
}

