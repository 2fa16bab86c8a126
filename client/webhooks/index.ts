// The merchant's side: verify a checkout notification, or mount a ready receiver for it.
export * from './verify.ts';
export * from './receiver.ts';
