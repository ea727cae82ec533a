DROP INDEX `docket_runs_group_claim`;--> statement-breakpoint
ALTER TABLE `docket_runs` ADD `by_group` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX `docket_runs_group_claim` ON `docket_runs` (`namespace`,`task_name`,`group_key`,"priority" DESC,`claim_due_at`) WHERE "docket_runs"."claim_due_at" IS NOT NULL AND "docket_runs"."by_group" = 1;