// One start that only takes a data directory's lock (server/store/data-directory-lock.ts), for the
// takeover race of data-directory-lock.test.ts: prints ACQUIRED or REFUSED with the reason, holds
// the lock HOLD_MS, then releases it. Run: node --import tsx lock-contender.ts <data directory>
import { lockDataDirectory } from '../../../server/store/data-directory-lock.ts';

const dataDir = process.argv[2]!;
try {
  const lock = await lockDataDirectory(dataDir, { onLost: (error) => console.log(`LOST ${error.message}`) });
  console.log(`ACQUIRED ${process.pid}`);
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.HOLD_MS ?? 2_000)));
  await lock.release();
} catch (error) {
  console.log(`REFUSED ${(error as Error).message}`);
}
