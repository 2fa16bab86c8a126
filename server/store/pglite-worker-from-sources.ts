// The PGlite thread's entry when the sandbox runs from its TypeScript sources (tsx, vitest): the
// published package starts the thread from the compiled pglite-worker.js instead.
//
// A worker thread runs plain Node, and Node 20 does not apply `--import` hooks to a worker's entry
// module. The thread used to start from a line that registered tsx and then imported the entry:
// each thread then had a module-hooks thread of its own, and every module it loaded (PGlite's
// JavaScript too) went through it, ~0.4 s of CPU at each open, ~40% of an in-memory store's open
// (the suites open ~150, bench/RESULTS.md, "Test suite time"). Instead, the entry and the sandbox
// files it imports are bundled once per process by esbuild (already what tsx transforms with; a
// devDependency, as tsx is) into one module, which the thread loads from a data: URL. PGlite is not
// bundled: it is imported from its package, by the absolute URL this process resolves it to, the
// same module the compiled entry imports.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const PGLITE = '@electric-sql/pglite';

let bundled: URL | undefined;

/** The bundled entry (`entry`: pglite-worker.ts), built at the first call of the process. */
export function workerFromSources(entry: URL): URL {
  if (bundled) return bundled;
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const pglite = import.meta.resolve(PGLITE);
  const { outputFiles } = buildSync({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    logLevel: 'silent',
    alias: { [PGLITE]: pglite },
    external: [pglite],
    // Stack traces name the entry's file rather than a data: URL of the whole bundle.
    footer: { js: `//# sourceURL=${entry.href}` },
  });
  bundled = new URL(`data:text/javascript;base64,${Buffer.from(outputFiles[0]!.text).toString('base64')}`);
  return bundled;
}
