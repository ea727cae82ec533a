CREATE TABLE `docket_changes` (
	`position` integer PRIMARY KEY NOT NULL,
	`namespace` text NOT NULL,
	`task_name` text NOT NULL,
	`task_version` text NOT NULL,
	`run_id` text NOT NULL,
	`seq` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `docket_changes_namespace` ON `docket_changes` (`namespace`);--> statement-breakpoint
CREATE INDEX `docket_changes_task` ON `docket_changes` (`namespace`,`task_name`);--> statement-breakpoint
CREATE TABLE `docket_feed_floors` (
	`namespace` text PRIMARY KEY NOT NULL,
	`floor` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `docket_changes` (`namespace`, `task_name`, `task_version`, `run_id`, `seq`)
SELECT r.`namespace`, r.`task_name`, r.`task_version`, h.`run_id`, h.`seq`
FROM `docket_history` h JOIN `docket_runs` r ON r.`run_id` = h.`run_id`
ORDER BY h.`at`, h.`run_id`, h.`seq`;
