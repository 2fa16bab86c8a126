// What a hosted page answers when it cannot take a payment, or when the customer must fix the form.

/** Why a page cannot take a payment, or what the customer must fix; rendered as an HTML page. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly kind: 'not_found' | 'method' | 'expired' | 'already_paid' | 'inactive' | 'form' | 'cross_site' | 'unreadable' | 'failed',
    message: string,
  ) {
    super(message);
  }
}
