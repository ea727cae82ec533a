DROP INDEX `docket_changes_namespace`;--> statement-breakpoint
DROP INDEX `docket_changes_task`;--> statement-breakpoint
ALTER TABLE `docket_feed_floors` ADD `trim_from` integer DEFAULT 0 NOT NULL;