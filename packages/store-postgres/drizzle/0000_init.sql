CREATE TABLE "docket_commands" (
	"namespace" text NOT NULL,
	"command_id" text NOT NULL,
	"request_hash" text NOT NULL,
	"result" text NOT NULL,
	"created_at" double precision NOT NULL,
	CONSTRAINT "docket_commands_namespace_command_id_pk" PRIMARY KEY("namespace","command_id")
);
--> statement-breakpoint
CREATE TABLE "docket_definitions" (
	"namespace" text NOT NULL,
	"name" text NOT NULL,
	"version" text NOT NULL,
	"hash" text NOT NULL,
	"definition" text NOT NULL,
	"created_at" double precision NOT NULL,
	CONSTRAINT "docket_definitions_namespace_name_version_pk" PRIMARY KEY("namespace","name","version")
);
--> statement-breakpoint
CREATE TABLE "docket_events" (
	"event_id" text PRIMARY KEY NOT NULL,
	"namespace" text NOT NULL,
	"run_id" text NOT NULL,
	"task_name" text NOT NULL,
	"task_version" text NOT NULL,
	"kind" text NOT NULL,
	"batch_id" text NOT NULL,
	"sequence" integer NOT NULL,
	"status" text NOT NULL,
	"delivery_attempt" integer NOT NULL,
	"replay_generation" integer NOT NULL,
	"revision" integer NOT NULL,
	"due_at" double precision NOT NULL,
	"timestamp" text NOT NULL,
	"query" text NOT NULL,
	"state" text,
	"error" text,
	"last_error" text,
	"lease_owner" text,
	"lease_token" integer,
	"lease_expires_at" double precision,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL,
	"delivered_at" double precision,
	"dead_at" double precision
);
--> statement-breakpoint
CREATE TABLE "docket_history" (
	"run_id" text NOT NULL,
	"seq" integer NOT NULL,
	"at" text NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text NOT NULL,
	"actor" text NOT NULL,
	"detail" text,
	CONSTRAINT "docket_history_run_id_seq_pk" PRIMARY KEY("run_id","seq")
);
--> statement-breakpoint
CREATE TABLE "docket_runs" (
	"run_id" text PRIMARY KEY NOT NULL,
	"namespace" text NOT NULL,
	"task_name" text NOT NULL,
	"task_version" text NOT NULL,
	"definition_hash" text NOT NULL,
	"status" text NOT NULL,
	"reason" text NOT NULL,
	"query" text NOT NULL,
	"state" text,
	"page" integer NOT NULL,
	"page_failures" integer NOT NULL,
	"business_failures" integer NOT NULL,
	"scheduled_retries" integer NOT NULL,
	"recoveries" integer NOT NULL,
	"error" text,
	"revision" integer NOT NULL,
	"trigger" text,
	"due_at" double precision,
	"claim_due_at" double precision,
	"deadline_at" double precision,
	"model_call_limit" integer,
	"model_calls_used" integer NOT NULL,
	"idempotency_key" text,
	"input_hash" text NOT NULL,
	"policy" text NOT NULL,
	"events" text NOT NULL,
	"recovery" text NOT NULL,
	"trigger_event" text,
	"fence" integer NOT NULL,
	"lease_owner" text,
	"lease_token" integer,
	"lease_expires_at" double precision,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE INDEX "docket_commands_created" ON "docket_commands" USING btree ("namespace","created_at");--> statement-breakpoint
CREATE INDEX "docket_events_run" ON "docket_events" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "docket_events_due" ON "docket_events" USING btree ("namespace","status","due_at");--> statement-breakpoint
CREATE INDEX "docket_events_list" ON "docket_events" USING btree ("namespace","status","event_id");--> statement-breakpoint
CREATE INDEX "docket_runs_claim" ON "docket_runs" USING btree ("namespace","task_name","task_version","claim_due_at") WHERE "docket_runs"."claim_due_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "docket_runs_lease" ON "docket_runs" USING btree ("namespace","lease_expires_at") WHERE "docket_runs"."lease_expires_at" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "docket_runs_idempotency" ON "docket_runs" USING btree ("namespace","task_name","idempotency_key") WHERE "docket_runs"."idempotency_key" IS NOT NULL;