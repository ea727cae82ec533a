CREATE TABLE `docket_settled_minutes` (
	`namespace` text NOT NULL,
	`minute` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`namespace`, `minute`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Hand-written: finished runs already stored count in the minute of their last write.
INSERT INTO `docket_settled_minutes` (`namespace`, `minute`, `n`)
	SELECT `namespace`, `updated_at` - (`updated_at` % 60000), count(*) FROM `docket_runs`
	WHERE `status` IN ('success', 'failed', 'cancelled') GROUP BY 1, 2;
