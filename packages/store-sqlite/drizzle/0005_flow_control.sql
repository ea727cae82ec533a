CREATE TABLE `docket_flow_claims` (
	`namespace` text NOT NULL,
	`task_name` text NOT NULL,
	`scope` text NOT NULL,
	`group_key` text NOT NULL,
	`at` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`namespace`, `task_name`, `scope`, `group_key`, `at`)
);
--> statement-breakpoint
CREATE TABLE `docket_flow_groups` (
	`namespace` text NOT NULL,
	`task_name` text NOT NULL,
	`group_key` text NOT NULL,
	`last_claimed_at` integer,
	`hold_until` integer,
	PRIMARY KEY(`namespace`, `task_name`, `group_key`)
);
--> statement-breakpoint
CREATE TABLE `docket_tasks` (
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`versions` text NOT NULL,
	`flow` text,
	`paused` integer NOT NULL,
	`revision` integer NOT NULL,
	`hold_until` integer,
	`group_hold_until` integer,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`namespace`, `name`)
);
--> statement-breakpoint
ALTER TABLE `docket_runs` ADD `group_key` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `docket_runs` ADD `rate_limited` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `docket_runs_group_claim` ON `docket_runs` (`namespace`,`task_name`,`group_key`,"priority" DESC,`claim_due_at`) WHERE "docket_runs"."claim_due_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `docket_runs_leased` ON `docket_runs` (`namespace`,`task_name`,`group_key`) WHERE "docket_runs"."lease_owner" IS NOT NULL;--> statement-breakpoint
-- Hand-written: every task registered before this migration gets its row (its versions, no limits, not paused,
-- revision 1), so that operator.tasks lists it before its queue registers it again.
INSERT INTO `docket_tasks` (`namespace`, `name`, `versions`, `flow`, `paused`, `revision`, `hold_until`, `group_hold_until`, `updated_at`)
SELECT `namespace`, `name`, json_group_array(`version`), NULL, 0, 1, NULL, NULL, max(`created_at`)
FROM (SELECT * FROM `docket_definitions` ORDER BY `created_at`) GROUP BY `namespace`, `name`;
