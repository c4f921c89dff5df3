// biome-ignore-all lint/style/noRestrictedImports: the integration tests boot the real API through the server's test harness, which reads the snapshot made here.
import { snapshotSetup } from "../../server/test/global-setup.ts";

/** The server's test databases, under names of the agent's own (see snapshotSetup). */
export default snapshotSetup("agent_test");
