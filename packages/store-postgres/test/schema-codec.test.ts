import { expectSchemaMatchesCodec } from '@docket/core/testing';
import { getTableColumns, type Table } from 'drizzle-orm';
import { describe, it } from 'vitest';
import { docketEvents, docketHistory, docketRuns } from '../src/schema.js';

const columns = (table: Table) => Object.values(getTableColumns(table)).map((column) => column.name);

describe('schema and row codec', () => {
  it('declare the same columns for runs, history and callback events', () => {
    expectSchemaMatchesCodec({
      runs: columns(docketRuns),
      history: columns(docketHistory),
      events: columns(docketEvents),
    });
  });
});
