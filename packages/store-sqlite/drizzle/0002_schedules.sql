CREATE TABLE `docket_schedules` (
	`namespace` text NOT NULL,
	`schedule_id` text NOT NULL,
	`task_name` text NOT NULL,
	`task_version` text NOT NULL,
	`cron` text NOT NULL,
	`timezone` text NOT NULL,
	`query` text NOT NULL,
	`limits` text NOT NULL,
	`misfire` text NOT NULL,
	`enabled` integer NOT NULL,
	`next_at` integer,
	`last_slot_at` integer,
	`revision` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`namespace`, `schedule_id`)
);
--> statement-breakpoint
CREATE INDEX `docket_schedules_due` ON `docket_schedules` (`namespace`,`task_name`,`task_version`,`next_at`) WHERE "docket_schedules"."enabled" = 1;