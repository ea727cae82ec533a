-- Key columns compare byte by byte, as every indexed text column does since 0003_key_collation.
CREATE TABLE "docket_schedules" (
	"namespace" text COLLATE "C" NOT NULL,
	"schedule_id" text COLLATE "C" NOT NULL,
	"task_name" text COLLATE "C" NOT NULL,
	"task_version" text COLLATE "C" NOT NULL,
	"cron" text NOT NULL,
	"timezone" text NOT NULL,
	"query" text NOT NULL,
	"limits" text NOT NULL,
	"misfire" text NOT NULL,
	"enabled" integer NOT NULL,
	"next_at" double precision,
	"last_slot_at" double precision,
	"revision" integer NOT NULL,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL,
	CONSTRAINT "docket_schedules_namespace_schedule_id_pk" PRIMARY KEY("namespace","schedule_id")
);
--> statement-breakpoint
CREATE INDEX "docket_schedules_due" ON "docket_schedules" USING btree ("namespace","task_name","task_version","next_at") WHERE "docket_schedules"."enabled" = 1;