CREATE TABLE `docket_run_counts` (
	`namespace` text NOT NULL,
	`task_name` text NOT NULL,
	`task_version` text NOT NULL,
	`status` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`namespace`, `task_name`, `task_version`, `status`)
) WITHOUT ROWID;
--> statement-breakpoint
ALTER TABLE `docket_runs` ADD `trace_parent` text;--> statement-breakpoint
-- Hand-written below: the first counts, read from the runs already there. From here on the store keeps them in the
-- transaction of each write that moves a run into or out of a counted status (src/sql/run-counts.ts).
INSERT INTO `docket_run_counts` (`namespace`, `task_name`, `task_version`, `status`, `n`)
	SELECT `namespace`, `task_name`, `task_version`, `status`, count(*) FROM `docket_runs` WHERE `status` IN ('waiting', 'blocked', 'paused', 'success', 'failed', 'cancelled')
	GROUP BY `namespace`, `task_name`, `task_version`, `status`;
