-- balena lets a device's users write what the device reports, `is_online` among it; Flotilla
-- computes `is_online` from the heartbeat and cloudlink, so a written value is kept here and read
-- as `is_online` until the device's connectivity changes or it reports its state again
-- (docs/balena-cli.md "balena's API rules").
ALTER TABLE "device" ADD COLUMN "written_is_online" boolean;
