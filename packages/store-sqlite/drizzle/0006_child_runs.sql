ALTER TABLE `docket_runs` ADD `parent_run_id` text;--> statement-breakpoint
ALTER TABLE `docket_runs` ADD `parent_page` integer;--> statement-breakpoint
ALTER TABLE `docket_runs` ADD `children` text;--> statement-breakpoint
CREATE INDEX `docket_runs_parent` ON `docket_runs` (`namespace`,`parent_run_id`,`parent_page`,`run_id`) WHERE "docket_runs"."parent_run_id" IS NOT NULL;