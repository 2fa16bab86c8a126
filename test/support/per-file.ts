// Run before every test file (vitest's setupFiles run again for each file, even in a worker that
// keeps its modules between files): what each file must clean up after itself.
import { afterAll } from 'vitest';
import { dropFreshSchemas } from '../server/support/stores.ts';

afterAll(dropFreshSchemas);
