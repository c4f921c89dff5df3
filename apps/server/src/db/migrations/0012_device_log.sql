-- Device log lines (issue 10): batches written by the API, pruned per device to FLOTILLA_DEVICE_LOG_LINES.
CREATE TABLE "device_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "device_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"device" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"timestamp" bigint NOT NULL,
	"message" text NOT NULL,
	"is_system" boolean NOT NULL,
	"is_std_err" boolean NOT NULL,
	"service_id" integer
);
--> statement-breakpoint
ALTER TABLE "device_log" ADD CONSTRAINT "device_log_device_device_id_fk" FOREIGN KEY ("device") REFERENCES "public"."device"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_log_device_idx" ON "device_log" USING btree ("device","id");