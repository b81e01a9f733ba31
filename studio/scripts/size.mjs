// Prints the size of the built Studio, gzipped, and fails when the
// JavaScript of the first screen (what index.html loads and preloads; the
// rich-text editor and other lazy chunks come later) is over the budget.
//   node scripts/size.mjs <dist>
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET = 300 * 1024;
const dist = process.argv[2] || 'dist';
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const first = new Set(
  [...html.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="\/studio\/([^"]+\.js)"/g)].map((m) => m[1]),
);
const gz = (file) => gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;
const kb = (n) => (n / 1024).toFixed(1).padStart(7) + ' KB';

let firstTotal = 0;
const lines = [];
for (const name of readdirSync(join(dist, 'assets')).sort()) {
  const file = join('assets', name);
  const raw = readFileSync(join(dist, file)).length;
  const z = gz(file);
  const isFirst = first.has(file);
  if (isFirst) firstTotal += z;
  lines.push(`  ${file.padEnd(40)} ${kb(raw)} ${kb(z)} gzipped${isFirst ? '  (first screen)' : ''}`);
}
console.log('studio build:');
console.log(lines.join('\n'));
console.log(`  first screen JavaScript: ${kb(firstTotal).trim()} gzipped (budget ${BUDGET / 1024} KB)`);
if (first.size === 0) {
  console.error('size: index.html loads no script');
  process.exit(1);
}
if (firstTotal > BUDGET) {
  console.error(`size: the first screen's JavaScript is over the budget: ${firstTotal} > ${BUDGET} bytes gzipped`);
  process.exit(1);
}
