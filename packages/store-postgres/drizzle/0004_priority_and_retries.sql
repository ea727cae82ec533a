DROP INDEX "docket_runs_claim";--> statement-breakpoint
ALTER TABLE "docket_runs" ADD COLUMN "priority" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "docket_runs" ADD COLUMN "retries" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "docket_runs_claim_priority" ON "docket_runs" USING btree ("namespace","task_name","task_version","priority","claim_due_at") WHERE "docket_runs"."claim_due_at" IS NOT NULL;