// Where the sandbox package's files are, whether this code runs from its sources (server/, with tsx
// or vitest) or from the build (server/dist/, with node): the nearest directory above this file
// that holds package.json. Files tsc does not emit (the SQL migrations, the HTML reference) are read
// from there, so the build needs no copies of them.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${from}`);
  }
}

/** The sandbox package's root directory (absolute, no trailing slash). */
export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
