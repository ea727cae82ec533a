CREATE TABLE "docket_settled_minutes" (
	"namespace" text COLLATE "C" NOT NULL,
	"minute" double precision NOT NULL,
	"shard" integer NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "docket_settled_minutes_namespace_minute_shard_pk" PRIMARY KEY("namespace","minute","shard")
);
--> statement-breakpoint
-- Hand-written below. The update trigger's function of 0006 now also adds each statement's settles (runs moving from
-- an unfinished status into success, failed or cancelled) to the minute of their updated_at, in this backend's shard.
CREATE OR REPLACE FUNCTION "docket_count_runs"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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
		INSERT INTO docket_settled_minutes AS m (namespace, minute, shard, n)
			SELECT n.namespace, floor(n.updated_at / 60000) * 60000, pg_backend_pid() % 16, count(*)
				FROM docket_new_rows n JOIN docket_old_rows o USING (run_id)
				WHERE n.status IN ('success', 'failed', 'cancelled') AND o.status NOT IN ('success', 'failed', 'cancelled')
			GROUP BY 1, 2 ORDER BY 1, 2
			ON CONFLICT (namespace, minute, shard) DO UPDATE SET n = m.n + excluded.n;
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
INSERT INTO "docket_settled_minutes" ("namespace", "minute", "shard", "n")
	SELECT "namespace", floor("updated_at" / 60000) * 60000, 0, count(*) FROM "docket_runs"
	WHERE "status" IN ('success', 'failed', 'cancelled') GROUP BY 1, 2;
