export { MIGRATIONS_FOLDER, MIGRATIONS_TABLE } from './migrations.js';
export { docketDefinitions, docketEvents, docketHistory, docketRuns, docketSchedules } from './schema.js';
export { type SqliteStore, type SqliteStoreOptions, type SqliteTransaction, sqliteStore } from './sqlite-store.js';
