#!/usr/bin/env node
// The lifecycle flows from a terminal: `node dist/lifecycle/cli.js <tracking|state|stop|scheduled|event> [flags]`.
import { parseArgs } from 'node:util';
import { FLOWS, type FlowOptions } from './flows.js';
import type { FlowName } from './task-directory.js';

const USAGE = `usage: docket-lifecycle <tracking|state|stop|scheduled|event> [--directory <dir>] [--provider <name>]
  [--ready] [--model-call-budget <n>] [--deadline-ms <n>] [--stop] [--due-at <ISO with zone>] [--wait-ms <n>] [--emit-event]`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) fail(`${flag} takes a non-negative integer`);
  return Number(value);
}

let parsed: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    allowPositionals: true,
    options: {
      directory: { type: 'string' },
      provider: { type: 'string' },
      ready: { type: 'boolean' },
      'model-call-budget': { type: 'string' },
      'deadline-ms': { type: 'string' },
      stop: { type: 'boolean' },
      'due-at': { type: 'string' },
      'wait-ms': { type: 'string' },
      'emit-event': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
}
try {
  parsed = parse();
} catch (error) {
  fail((error as Error).message);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const flow = positionals[0] as FlowName | undefined;
// A lone `--` ends the options (POSIX): what follows it is an argument even when it looks like a flag.
const afterEnd = positionals.find((p) => p.startsWith('-'));
if (afterEnd !== undefined) {
  fail(`${afterEnd} came after a lone --, which ends the options; pnpm passes options on without it`);
}
if (!flow || !(flow in FLOWS) || positionals.length > 1) fail('name one flow');
const dueAt = values['due-at'];
if (dueAt !== undefined && !/(Z|[+-]\d{2}:\d{2})$/.test(dueAt)) fail('--due-at needs an ISO time with a zone');

const controller = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort());

const options: FlowOptions = {
  signal: controller.signal,
  ...(values.directory === undefined ? {} : { directory: values.directory }),
  ...(values.provider === undefined ? {} : { provider: values.provider }),
  ...(values.ready ? { ready: true } : {}),
  ...(values.stop ? { stop: true } : {}),
  ...(values['emit-event'] ? { emitEvent: true } : {}),
  ...(dueAt === undefined ? {} : { dueAt }),
};
const budget = integer(values['model-call-budget'], '--model-call-budget');
const deadline = integer(values['deadline-ms'], '--deadline-ms');
const wait = integer(values['wait-ms'], '--wait-ms');
if (budget !== undefined) options.modelCallBudget = budget;
if (deadline !== undefined) options.deadlineMs = deadline;
if (wait !== undefined) options.waitMs = wait;
// On a terminal, show what a waiting flow waits for; never when output goes to a file or a pipe.
if (process.stderr.isTTY) {
  options.onWait = ({ waitingFor, msLeft }) =>
    process.stderr.write(`\rwaiting for ${waitingFor}${msLeft === null ? '' : `, ${msLeft} ms left`}   `);
}

try {
  const output = await FLOWS[flow](options);
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  process.exit(0);
} catch (error) {
  const code = (error as { code?: string }).code;
  process.stderr.write(`${code ? `${code}: ` : ''}${(error as Error).message}\n`);
  process.exit(1);
}
