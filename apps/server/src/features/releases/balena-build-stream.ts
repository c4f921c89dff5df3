import type { BuildEvent } from "./builder.ts";

/**
 * balena's builder protocol (docs/balena-cli.md), spoken when `balena push` calls
 * `POST /v3/build?slug=…`: the answer is one JSON array written as the build goes, each element a
 * message balena-cli prints. The CLI takes the release id from the `buildLogId` metadata (it
 * cancels that release on Ctrl-C and tags it after the build) and exits non-zero when any
 * message is flagged `isError`.
 */

export type BuilderMessage =
  | { type: "metadata"; resource: "buildLogId"; value: number }
  | { message: string; isError?: true; isSuccess?: true };

/** Lines that name a failure: ours (`error: …`, `[svc] error: …`) and the engine's own (`Error: …`). */
const ERROR_LINE = /^(\[[^\]]+\] )?error:/i;

/** The balena-cli messages for one of our build events. */
export function builderMessages(event: BuildEvent, context: { fleet: string; user: string }): BuilderMessage[] {
  switch (event.type) {
    case "release":
      return [
        { type: "metadata", resource: "buildLogId", value: event.id },
        { message: `[Info] Starting build for ${context.fleet}, user ${context.user}` },
      ];
    case "log": {
      // Service lines already read `[service] …`, as balena's do; the builder's own are [Info] or [Error].
      const failure = ERROR_LINE.test(event.message);
      if (event.service) return [failure ? { message: event.message, isError: true } : { message: event.message }];
      return [
        failure
          ? { message: `[Error] ${event.message.replace(/^error:\s*/i, "")}`, isError: true }
          : { message: `[Info] ${event.message}` },
      ];
    }
    case "status":
      if (event.status === "success") {
        return [
          { message: "[Success] Release successfully created!" },
          { message: `[Info] Release: ${event.commit} (id: ${event.id})`, isSuccess: true },
        ];
      }
      return [
        {
          message: `[Error] ${event.status === "cancelled" ? "Build cancelled" : "Build failed"} (release ${event.id})`,
          isError: true,
        },
      ];
  }
}

/** Writes messages as the elements of one JSON array, opened on the first and closed by `end`. */
export function jsonArrayWriter(write: (text: string) => void) {
  let opened = false;
  return {
    message(message: BuilderMessage) {
      write(`${opened ? "\n," : "["}\n${JSON.stringify(message)}`);
      opened = true;
    },
    end() {
      write(opened ? "\n]\n" : "[]\n");
    },
  };
}
