// Where a first `startSandbox({ storage: 'memory' })` of a process spends its time: the steps of
// server/sandbox-server.ts run one by one on the built package (server/dist, `make build-server`),
// each printed with the milliseconds since the start. The PGlite thread works while the main thread
// loads the app's modules, so "store open" is when that thread was ready, not how long it took.
// Not part of `make bench` (bench/sandbox.ts measures the start as a whole); its figures are quoted
// in bench/RESULTS.md, "Where the start-up time goes".
// Plain JavaScript run by plain node: under tsx its loader hooks would slow every module load.
// Run: make build-server && node bench/start-phases.mjs
const DIST = new URL('../server/dist/', import.meta.url);
const started = performance.now();
const mark = (step) => console.log(`${String(Math.round(performance.now() - started)).padStart(5)} ms  ${step}`);
const load = (path) => import(new URL(path, DIST).href);

const { openStore } = await load('store/open-store.js');
const { loadConfig } = await load('config.js');
const config = { ...loadConfig({}), port: 0, dataDir: undefined };
mark('store modules loaded');
const storeReady = openStore({ ...config, pgliteSnapshot: true }).then((store) => {
  mark('store open (PGlite thread ready)');
  return store;
});
mark('openStore called (it spawns the PGlite thread in a microtask, before the next step loads anything)');
const app = await load('app.js');
mark("app's modules loaded");
app.prepareContract(config);
mark('validator build started (its synchronous part)');
const store = await storeReady;
const { migrate } = await load('store/migrate.js');
await migrate(store);
mark('migrations checked');
const { createLogger } = await load('http/logging.js');
await app.createApp({ store, config, logger: createLogger('silent') });
mark('app built (the validator finished)');
await store.close();
