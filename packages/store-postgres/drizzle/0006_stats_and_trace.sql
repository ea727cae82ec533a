-- Key columns compare byte by byte, as every indexed text column does since 0003_key_collation.
CREATE TABLE "docket_run_counts" (
	"namespace" text COLLATE "C" NOT NULL,
	"task_name" text COLLATE "C" NOT NULL,
	"task_version" text COLLATE "C" NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"shard" integer NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "docket_run_counts_namespace_task_name_task_version_status_shard_pk" PRIMARY KEY("namespace","task_name","task_version","status","shard")
);
--> statement-breakpoint
ALTER TABLE "docket_runs" ADD COLUMN "trace_parent" text;--> statement-breakpoint
-- Hand-written below (drizzle-kit cannot declare functions or triggers). One statement trigger per kind of write adds
-- the write's changes of status to the counts, summed per task and status, in this backend's shard. The function
-- keeps the migration's search_path, so it finds the counts table whatever the caller's search_path.
CREATE FUNCTION "docket_count_runs"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO docket_run_counts AS c (namespace, task_name, task_version, status, shard, n)
			SELECT namespace, task_name, task_version, status, pg_backend_pid() % 16, count(*) FROM docket_new_rows
			GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
			ON CONFLICT (namespace, task_name, task_version, status, shard) DO UPDATE SET n = c.n + excluded.n;
	ELSIF TG_OP = 'UPDATE' THEN
		INSERT INTO docket_run_counts AS c (namespace, task_name, task_version, status, shard, n)
			SELECT namespace, task_name, task_version, status, pg_backend_pid() % 16, sum(d) FROM (
				SELECT n.namespace, n.task_name, n.task_version, n.status, 1 AS d, o.status AS was
					FROM docket_new_rows n JOIN docket_old_rows o USING (run_id)
				UNION ALL
				SELECT o.namespace, o.task_name, o.task_version, o.status, -1 AS d, n.status AS was
					FROM docket_old_rows o JOIN docket_new_rows n USING (run_id)
			) AS changes WHERE status <> was
			GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
			ON CONFLICT (namespace, task_name, task_version, status, shard) DO UPDATE SET n = c.n + excluded.n;
	ELSE
		INSERT INTO docket_run_counts AS c (namespace, task_name, task_version, status, shard, n)
			SELECT namespace, task_name, task_version, status, pg_backend_pid() % 16, -count(*) FROM docket_old_rows
			GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
			ON CONFLICT (namespace, task_name, task_version, status, shard) DO UPDATE SET n = c.n + excluded.n;
	END IF;
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "docket_runs_count_insert" AFTER INSERT ON "docket_runs"
	REFERENCING NEW TABLE AS docket_new_rows FOR EACH STATEMENT EXECUTE FUNCTION "docket_count_runs"();
--> statement-breakpoint
CREATE TRIGGER "docket_runs_count_update" AFTER UPDATE ON "docket_runs"
	REFERENCING OLD TABLE AS docket_old_rows NEW TABLE AS docket_new_rows FOR EACH STATEMENT EXECUTE FUNCTION "docket_count_runs"();
--> statement-breakpoint
CREATE TRIGGER "docket_runs_count_delete" AFTER DELETE ON "docket_runs"
	REFERENCING OLD TABLE AS docket_old_rows FOR EACH STATEMENT EXECUTE FUNCTION "docket_count_runs"();
--> statement-breakpoint
INSERT INTO "docket_run_counts" ("namespace", "task_name", "task_version", "status", "shard", "n")
	SELECT "namespace", "task_name", "task_version", "status", 0, count(*) FROM "docket_runs" GROUP BY 1, 2, 3, 4;
