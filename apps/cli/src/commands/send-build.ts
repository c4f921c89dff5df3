import { type BuildResult, build, summary } from "../builder.ts";
import { CliError } from "../errors.ts";
import { formatBytes, type Io } from "../io.ts";
import type { Fleet, Session } from "../sdk.ts";

/**
 * Sends a packed project to the builder for `fleet` and prints the build as it goes: each log
 * line, then the summary. Ctrl-C closes the request, which cancels the build on the server.
 */
export async function sendBuild(
  session: Session,
  fleet: Fleet,
  archive: Buffer,
  flags: { draft?: boolean; note?: string },
  io: Io,
): Promise<BuildResult> {
  io.out(`Sending ${formatBytes(archive.length)} to the builder of ${fleet.slug}${flags.draft ? " (draft)" : ""}`);
  const controller = new AbortController();
  const onSigint = () => {
    io.err("Cancelling the build…");
    controller.abort();
  };
  process.once("SIGINT", onSigint);
  try {
    const result = await build({
      apiUrl: session.apiUrl,
      token: session.token,
      fleetId: fleet.id,
      archive,
      ...flags,
      signal: controller.signal,
      onLog: (message) => io.out(message),
    });
    io.out(summary(result));
    return result;
  } catch (error) {
    if (controller.signal.aborted) throw new CliError("Push cancelled: the build is cancelled on the server", 130);
    throw error;
  } finally {
    process.off("SIGINT", onSigint);
  }
}
