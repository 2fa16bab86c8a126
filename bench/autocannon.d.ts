// autocannon ships no types (and @types/autocannon is not installed): the part bench/server.ts uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    /** Requests sent in turn; `setupRequest` may change each one before it is sent. */
    requests?: Array<{ method?: string; headers?: Record<string, string>; body?: string; setupRequest?: (request: RawRequest) => RawRequest }>;
  }
  interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
    statusCodeStats?: Record<string, { count: number | string }>;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
