import { schemaCodecSuite } from '@docket/core/conformance';
import { getTableColumns, type Table } from 'drizzle-orm';
import { docketEvents, docketHistory, docketRuns } from '../src/schema.js';

const names = (table: Table) => Object.values(getTableColumns(table)).map((column) => column.name);

// `by_group` is the store's own column (which runs the group claim index keeps, `src/flow/by-group.ts`), not the run's.
const runs = names(docketRuns).filter((name) => name !== 'by_group');

schemaCodecSuite({ runs, history: names(docketHistory), events: names(docketEvents) });
