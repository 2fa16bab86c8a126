// How a host name becomes addresses (the system's resolver, or a test's): the notification URL
// checks take one, and the app passes it down (area-routes.ts).
import type { LookupAddress } from 'node:dns';

export type HostResolver = (hostname: string) => Promise<LookupAddress[]>;
