// Build step of the sandbox package (`npm run build`, after tsc): writes dist/pglite-snapshot.tar,
// the migrated empty data directory in-memory sandboxes start from (pglite-snapshot.ts).
import { PGLITE_SNAPSHOT_FILE } from './pglite-snapshot.ts';
import { writePgliteSnapshot } from './pglite-snapshot-writer.ts';

const started = Date.now();
const { migrations } = await writePgliteSnapshot();
console.log(`${PGLITE_SNAPSHOT_FILE}: ${migrations.length} migrations, ${Date.now() - started} ms`);
