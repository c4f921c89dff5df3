// biome-ignore-all lint/style/noRestrictedImports: the integration tests boot the real API through the server's test harness, which reads the snapshot made here.
import { snapshotSetup } from "../../server/test/global-setup.ts";

/** The server's test databases, under names of the CLI's own (see snapshotSetup). */
export default snapshotSetup("cli_test");
