import { runStoreConformance } from '@docket/core/conformance';
import { afterAll, beforeAll } from 'vitest';
import { backend, DATABASE_URL, postgresHarness } from './helpers.js';

let db: Awaited<ReturnType<typeof backend>>;
beforeAll(async () => {
  db = await backend();
});
afterAll(async () => {
  await db.close();
});

runStoreConformance(DATABASE_URL ? 'postgres (server)' : 'postgres (PGlite)', () => postgresHarness(db));
