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
-- Hand-written below (drizzle-kit cannot declare triggers): the counts follow every insert, status change and delete.
CREATE TRIGGER `docket_runs_count_insert` AFTER INSERT ON `docket_runs` BEGIN
	INSERT INTO `docket_run_counts` (`namespace`, `task_name`, `task_version`, `status`, `n`)
		VALUES (new.`namespace`, new.`task_name`, new.`task_version`, new.`status`, 1)
		ON CONFLICT DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `docket_runs_count_update` AFTER UPDATE OF `status` ON `docket_runs` WHEN old.`status` <> new.`status` BEGIN
	UPDATE `docket_run_counts` SET `n` = `n` - 1 WHERE `namespace` = old.`namespace` AND `task_name` = old.`task_name`
		AND `task_version` = old.`task_version` AND `status` = old.`status`;
	INSERT INTO `docket_run_counts` (`namespace`, `task_name`, `task_version`, `status`, `n`)
		VALUES (new.`namespace`, new.`task_name`, new.`task_version`, new.`status`, 1)
		ON CONFLICT DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `docket_runs_count_delete` AFTER DELETE ON `docket_runs` BEGIN
	UPDATE `docket_run_counts` SET `n` = `n` - 1 WHERE `namespace` = old.`namespace` AND `task_name` = old.`task_name`
		AND `task_version` = old.`task_version` AND `status` = old.`status`;
END;
--> statement-breakpoint
INSERT INTO `docket_run_counts` (`namespace`, `task_name`, `task_version`, `status`, `n`)
	SELECT `namespace`, `task_name`, `task_version`, `status`, count(*) FROM `docket_runs`
	GROUP BY `namespace`, `task_name`, `task_version`, `status`;
