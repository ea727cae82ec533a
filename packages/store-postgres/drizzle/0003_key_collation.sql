-- Every text column that an index keys on compares byte by byte (COLLATE "C") instead of by the database's
-- collation. Index insertions and lookups then compare with memcmp rather than the locale's strcoll, which the
-- server spent ~5% of its time in while processing runs; and ids, keys and names sort the same way on every
-- Docket store (SQLite and the memory store compare bytes too). Equality is unchanged: deterministic collations
-- already treat only identical strings as equal. Only the collation changes, so PostgreSQL rewrites no table; it
-- rebuilds the indexes on these columns, in the migration's transaction.
ALTER TABLE "docket_runs"
	ALTER COLUMN "run_id" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "namespace" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "task_name" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "task_version" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "idempotency_key" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "docket_history" ALTER COLUMN "run_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "docket_events"
	ALTER COLUMN "event_id" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "namespace" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "run_id" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "status" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "docket_definitions"
	ALTER COLUMN "namespace" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "name" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "version" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "docket_commands"
	ALTER COLUMN "namespace" SET DATA TYPE text COLLATE "C",
	ALTER COLUMN "command_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "docket_settings" ALTER COLUMN "key" SET DATA TYPE text COLLATE "C";
