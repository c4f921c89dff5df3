// biome-ignore-all lint/style/noRestrictedImports: the integration tests boot the real API through the server's test harness, which reads the snapshot made here.
import { snapshotSetup } from "../../server/test/global-setup.ts";
import { containersSetup } from "./containers-setup.ts";

type Provide = (key: string, value: string) => void;

const databases = snapshotSetup("agent_test");

/** The server's test databases, under names of the agent's own (see snapshotSetup), and podman's Docker API. */
export default async function setup(context: { provide: Provide }) {
  const [dropDatabases, stopContainers] = await Promise.all([databases(context), containersSetup(context)]);
  return async () => {
    await stopContainers();
    await dropDatabases();
  };
}
