export { age, historyTable, paint, runDetails, runsTable, table, useColour } from './format.js';
export { type Io, main, processIo } from './main.js';
export { COMMAND_USAGE, USAGE } from './usage.js';
