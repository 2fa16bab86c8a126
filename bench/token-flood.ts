// A legitimate caller's token latency while wrong guesses flood the token endpoint (issue 11,
// item 7): the caller asks for tokens one after the other with its correct secret, first alone, then
// while FLOOD_CONNECTIONS connections send wrong secrets, each for another unknown client id (so
// that no per-client throttle stops them; each with a secret of its own, so that every guess costs
// one scrypt). The caller runs in this
// process next to autocannon, so its figures include this process's own turns.
import autocannon from 'autocannon';

const FLOOD_CONNECTIONS = 40;
const TOKEN_PATH = '/authentication/oauth2/-core/access_token';
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (clientId: string, clientSecret: string) =>
  new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'digital-plataform:gateway-api' }).toString();

export interface Latencies {
  calls: number;
  p50: number;
  p99: number;
  /** Answers other than 200 the legitimate caller got. */
  refused: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

/** Sequential token calls with the correct secret for `seconds`. */
async function legitimateCaller(url: string, client: { id: string; secret: string }, seconds: number): Promise<Latencies> {
  const body = form(client.id, client.secret);
  const times: number[] = [];
  let refused = 0;
  for (const until = performance.now() + seconds * 1000; performance.now() < until; ) {
    const started = performance.now();
    const res = await fetch(url + TOKEN_PATH, { method: 'POST', headers: FORM_TYPE, body });
    await res.arrayBuffer();
    times.push(performance.now() - started);
    if (res.status !== 200) refused++;
  }
  times.sort((a, b) => a - b);
  return { calls: times.length, p50: percentile(times, 0.5), p99: percentile(times, 0.99), refused };
}

export interface FloodResult {
  quiet: Latencies;
  flooded: Latencies;
  /** Wrong guesses answered per second during the flood, and their statuses. */
  guessesPerSecond: number;
  guessStatuses: Record<string, number>;
}

export async function tokenFlood(url: string, client: { id: string; secret: string }, seconds: number): Promise<FloodResult> {
  await legitimateCaller(url, client, 1); // warm-up: the first correct call pays scrypt once
  const quiet = await legitimateCaller(url, client, seconds);
  let guess = 0;
  const [flood, flooded] = await Promise.all([
    autocannon({
      url: url + TOKEN_PATH,
      connections: FLOOD_CONNECTIONS,
      duration: seconds + 1,
      requests: [
        {
          method: 'POST',
          headers: FORM_TYPE,
          setupRequest: (request) => ({ ...request, body: form(`guess-${guess}`, `wrong-secret-${guess++}`) }),
        },
      ],
    }),
    // Starts once the flood is under way, ends before it does.
    new Promise((r) => setTimeout(r, 500)).then(() => legitimateCaller(url, client, seconds)),
  ]);
  const guessStatuses = Object.fromEntries(Object.entries(flood.statusCodeStats ?? {}).map(([status, s]) => [status, Number(s.count)]));
  return { quiet, flooded, guessesPerSecond: flood.requests.average, guessStatuses };
}

const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');

/** The lines of bench/RESULTS.md for one run. */
export function tokenFloodLines(storage: string, r: FloodResult): string[] {
  const row = (name: string, l: Latencies) => `| ${name} | ${l.calls} | ${ms(l.p50)} | ${ms(l.p99)} | ${l.refused} |`;
  return [
    `On ${storage}: wrong guesses answered ${ms(r.guessesPerSecond)}/s during the flood (statuses ${JSON.stringify(r.guessStatuses)}).`,
    '',
    '| legitimate caller | token calls | p50 (ms) | p99 (ms) | not 200 |',
    '|---|---:|---:|---:|---:|',
    row('alone', r.quiet),
    row(`during a flood of ${FLOOD_CONNECTIONS} connections of wrong guesses`, r.flooded),
    '',
  ];
}
