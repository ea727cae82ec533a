CREATE TABLE "docket_changes" (
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "docket_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"position" bigint,
	"namespace" text COLLATE "C",
	"task_name" text COLLATE "C",
	"task_version" text,
	"run_id" text NOT NULL,
	"seq" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "docket_feed" (
	"id" integer PRIMARY KEY NOT NULL,
	"head" bigint NOT NULL,
	"floor" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "docket_feed_floors" (
	"namespace" text COLLATE "C" PRIMARY KEY NOT NULL,
	"floor" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "docket_changes_unsequenced" ON "docket_changes" USING btree ("id") WHERE "docket_changes"."position" IS NULL;--> statement-breakpoint
CREATE INDEX "docket_changes_feed" ON "docket_changes" USING btree ("namespace","position") WHERE "docket_changes"."position" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "docket_changes_task" ON "docket_changes" USING btree ("namespace","task_name","position") WHERE "docket_changes"."position" IS NOT NULL;--> statement-breakpoint
INSERT INTO "docket_changes" ("position", "namespace", "task_name", "task_version", "run_id", "seq")
OVERRIDING SYSTEM VALUE
SELECT row_number() OVER (ORDER BY h."at", h."run_id", h."seq"), r."namespace", r."task_name", r."task_version", h."run_id", h."seq"
FROM "docket_history" h JOIN "docket_runs" r ON r."run_id" = h."run_id";--> statement-breakpoint
INSERT INTO "docket_feed" ("id", "head") SELECT 1, coalesce(max("position"), 0) FROM "docket_changes";--> statement-breakpoint
CREATE FUNCTION "docket_history_to_changes"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO docket_changes (run_id, seq) SELECT n.run_id, n.seq FROM docket_new_history n ORDER BY n.run_id, n.seq;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "docket_history_changes" AFTER INSERT ON "docket_history"
REFERENCING NEW TABLE AS docket_new_history FOR EACH STATEMENT EXECUTE FUNCTION "docket_history_to_changes"();--> statement-breakpoint
CREATE FUNCTION "docket_sequence_changes"(max_rows integer) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  given bigint;
  head_now bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM docket_changes WHERE position IS NULL) THEN
    RETURN 0;
  END IF;
  SELECT head INTO head_now FROM docket_feed WHERE id = 1 FOR UPDATE;
  -- Staged rows carry only the run and seq: their run's namespace and task are read here, on the readers' side. A row
  -- whose run retention already deleted is deleted with it; the others are numbered without gaps.
  WITH staged AS (
    SELECT c.ctid AS row_at, c.id, r.namespace, r.task_name, r.task_version
    FROM docket_changes c LEFT JOIN docket_runs r ON r.run_id = c.run_id
    WHERE c.position IS NULL ORDER BY c.id LIMIT max_rows
  ),
  todo AS (
    SELECT *, row_number() OVER (PARTITION BY namespace IS NULL ORDER BY id) AS k FROM staged
  ),
  gone AS (
    DELETE FROM docket_changes c USING todo WHERE c.ctid = todo.row_at AND todo.namespace IS NULL
  )
  UPDATE docket_changes c
  SET position = head_now + todo.k, namespace = todo.namespace, task_name = todo.task_name,
    task_version = todo.task_version
  FROM todo WHERE c.ctid = todo.row_at AND todo.namespace IS NOT NULL;
  GET DIAGNOSTICS given = ROW_COUNT;
  IF given > 0 THEN
    UPDATE docket_feed SET head = head_now + given WHERE id = 1;
  END IF;
  RETURN given;
END $$;
