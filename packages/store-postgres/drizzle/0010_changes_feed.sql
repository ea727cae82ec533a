CREATE TABLE "docket_changes" (
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "docket_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"position" bigint,
	"namespace" text COLLATE "C" NOT NULL,
	"task_name" text COLLATE "C" NOT NULL,
	"task_version" text NOT NULL,
	"run_id" text NOT NULL,
	"seq" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "docket_feed" (
	"id" integer PRIMARY KEY NOT NULL,
	"head" bigint NOT NULL
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
  INSERT INTO docket_changes (namespace, task_name, task_version, run_id, seq)
  SELECT r.namespace, r.task_name, r.task_version, n.run_id, n.seq
  FROM docket_new_history n JOIN docket_runs r ON r.run_id = n.run_id
  ORDER BY n.run_id, n.seq;
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
    RETURN (SELECT head FROM docket_feed WHERE id = 1);
  END IF;
  SELECT head INTO head_now FROM docket_feed WHERE id = 1 FOR UPDATE;
  WITH todo AS (
    SELECT ctid AS row_at, row_number() OVER (ORDER BY id) AS k
    FROM docket_changes WHERE position IS NULL ORDER BY id LIMIT max_rows
  )
  UPDATE docket_changes c SET position = head_now + todo.k FROM todo WHERE c.ctid = todo.row_at;
  GET DIAGNOSTICS given = ROW_COUNT;
  IF given > 0 THEN
    UPDATE docket_feed SET head = head_now + given WHERE id = 1;
  END IF;
  RETURN head_now + given;
END $$;
