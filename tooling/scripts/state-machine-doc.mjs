// Regenerates the transition table section of docs/state-machine.md from @docket/core's TRANSITION_TABLE.
// Run after `pnpm build`: node tooling/scripts/state-machine-doc.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { TRANSITION_TABLE } from '../../packages/core/dist/store/index.js';

const path = new URL('../../docs/state-machine.md', import.meta.url);
const rows = TRANSITION_TABLE.map(
  (r) =>
    `| \`${r.input}\` | ${r.from.map((f) => (f === null ? '(new)' : `\`${f}\``)).join(', ')} | \`${r.to}\` | ${r.reasons.map((x) => `\`${x}\``).join(', ')} | ${r.when} |`,
);
const table = ['| input | from | to | reasons | when |', '|---|---|---|---|---|', ...rows].join('\n');
const doc = readFileSync(path, 'utf8');
const start = '<!-- table:start -->';
const end = '<!-- table:end -->';
const next = `${doc.slice(0, doc.indexOf(start) + start.length)}\n${table}\n${doc.slice(doc.indexOf(end))}`;
writeFileSync(path, next);
