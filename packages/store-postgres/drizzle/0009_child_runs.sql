ALTER TABLE "docket_runs" ADD COLUMN "parent_run_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "docket_runs" ADD COLUMN "parent_page" integer;--> statement-breakpoint
ALTER TABLE "docket_runs" ADD COLUMN "children" text;--> statement-breakpoint
CREATE INDEX "docket_runs_parent" ON "docket_runs" USING btree ("namespace","parent_run_id","parent_page","run_id") WHERE "docket_runs"."parent_run_id" IS NOT NULL;