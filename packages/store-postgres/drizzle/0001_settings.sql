CREATE TABLE "docket_settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
