// How the platform writes an instant: ISO 8601 UTC with seconds, no fraction (the contract's
// `create_date`, `transaction_datetime`, `applied_at`, ...).
export const isoSeconds = (instant: Date | string | number) => new Date(instant).toISOString().replace(/\.\d{3}Z$/, 'Z');
