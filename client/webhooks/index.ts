// The merchant's side: verify a checkout notification, mount a ready receiver for it (Express,
// node:http, Fetch API), and build test notifications and deliveries for the receiver's unit tests.
export * from './verify.ts';
export * from './receiver.ts';
export * from './testing.ts';
