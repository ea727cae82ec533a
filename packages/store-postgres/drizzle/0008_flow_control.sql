CREATE TABLE "docket_flow_claims" (
	"namespace" text COLLATE "C" NOT NULL,
	"task_name" text COLLATE "C" NOT NULL,
	"scope" text COLLATE "C" NOT NULL,
	"group_key" text COLLATE "C" NOT NULL,
	"at" double precision NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "docket_flow_claims_namespace_task_name_scope_group_key_at_pk" PRIMARY KEY("namespace","task_name","scope","group_key","at")
);
--> statement-breakpoint
CREATE TABLE "docket_flow_groups" (
	"namespace" text COLLATE "C" NOT NULL,
	"task_name" text COLLATE "C" NOT NULL,
	"group_key" text COLLATE "C" NOT NULL,
	"last_claimed_at" double precision,
	"hold_until" double precision,
	CONSTRAINT "docket_flow_groups_namespace_task_name_group_key_pk" PRIMARY KEY("namespace","task_name","group_key")
);
--> statement-breakpoint
CREATE TABLE "docket_tasks" (
	"namespace" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"versions" text NOT NULL,
	"flow" text,
	"paused" integer NOT NULL,
	"revision" integer NOT NULL,
	"hold_until" double precision,
	"group_hold_until" double precision,
	"updated_at" double precision NOT NULL,
	CONSTRAINT "docket_tasks_namespace_name_pk" PRIMARY KEY("namespace","name")
);
--> statement-breakpoint
ALTER TABLE "docket_runs" ADD COLUMN "group_key" text COLLATE "C" DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "docket_runs" ADD COLUMN "rate_limited" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "docket_runs_group_claim" ON "docket_runs" USING btree ("namespace","task_name","group_key","priority","claim_due_at") WHERE "docket_runs"."claim_due_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "docket_runs_leased" ON "docket_runs" USING btree ("namespace","task_name","group_key") WHERE "docket_runs"."lease_owner" IS NOT NULL;--> statement-breakpoint
-- Hand-written: every task registered before this migration gets its row (its versions, no limits, not paused,
-- revision 1), so that operator.tasks lists it before its queue registers it again.
INSERT INTO "docket_tasks" ("namespace", "name", "versions", "flow", "paused", "revision", "hold_until", "group_hold_until", "updated_at")
SELECT "namespace", "name", json_agg("version" ORDER BY "created_at")::text, NULL, 0, 1, NULL, NULL, max("created_at")
FROM "docket_definitions" GROUP BY "namespace", "name";
