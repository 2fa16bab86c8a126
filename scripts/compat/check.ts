// `make check-compat`: fails when the joined bundle breaks a client of the last released contract
// (scripts/compat/released/platform.openapi.json) and the major version of info.version did not
// change. See scripts/compat/README.md.
//
//   tsx scripts/compat/check.ts [released.json] [current.json]
//   tsx scripts/compat/check.ts --release     (copy the current bundle as the released baseline)
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { compare } from './compat.ts';

const root = new URL('../..', import.meta.url).pathname;
const RELEASED = join(root, 'scripts', 'compat', 'released', 'platform.openapi.json');
const CURRENT = join(root, 'generated', 'platform.openapi.json');

const args = process.argv.slice(2);
if (args[0] === '--release') {
  await mkdir(dirname(RELEASED), { recursive: true });
  await copyFile(CURRENT, RELEASED);
  console.log(`Released baseline is now ${CURRENT} (commit ${RELEASED}).`);
} else {
  const [releasedFile = RELEASED, currentFile = CURRENT] = args;
  const read = async (file: string) => JSON.parse(await readFile(file, 'utf8'));
  const result = compare(await read(releasedFile), await read(currentFile));
  for (const f of result.breaking) console.log(`${f.rule}: ${f.where}: ${f.message}`);
  if (!result.breaking.length) {
    console.log(`No breaking change against the released contract (${result.released} → ${result.current}).`);
  } else if (result.majorChanged) {
    console.log(`${result.breaking.length} breaking change(s), allowed: the major version changed (${result.released} → ${result.current}).`);
  } else {
    console.error(
      `${result.breaking.length} breaking change(s) against the released contract ${result.released} while info.version stays ${result.current}: ` +
        'undo them, or make them a new major version (info.version in scripts/generate.ts).',
    );
    process.exitCode = 1;
  }
}
