import { schemaCodecSuite } from '@docket/core/conformance';
import { getTableColumns, type Table } from 'drizzle-orm';
import { docketEvents, docketHistory, docketRuns } from '../src/schema.js';

const names = (table: Table) => Object.values(getTableColumns(table)).map((column) => column.name);

schemaCodecSuite({ runs: names(docketRuns), history: names(docketHistory), events: names(docketEvents) });
