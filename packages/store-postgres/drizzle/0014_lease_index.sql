DROP INDEX "docket_runs_leased";--> statement-breakpoint
DROP INDEX "docket_runs_lease";--> statement-breakpoint
CREATE INDEX "docket_runs_lease" ON "docket_runs" USING btree ("namespace","task_name","group_key","lease_expires_at") WHERE "docket_runs"."lease_expires_at" IS NOT NULL;