// bench/RESULTS.md is written a section at a time: each script replaces its own `## title` section
// and keeps the others (bench/server.ts, bench/sandbox.ts).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const RESULTS = new URL('RESULTS.md', import.meta.url).pathname;

/** Replaces the `## title` section of bench/RESULTS.md (up to the next `## `), keeping the others. */
export function writeSection(title: string, section: string): void {
  const previous = existsSync(RESULTS) ? readFileSync(RESULTS, 'utf8') : '# Benchmarks\n';
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const kept = previous.replace(new RegExp(`## ${escaped}[\\s\\S]*?(?=\\n## (?!#)|$)`), '').trimEnd();
  writeFileSync(RESULTS, `${kept}\n\n${section}`);
}
