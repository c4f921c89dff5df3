import type { Readable } from "node:stream";
import Docker from "dockerode";
import type { Config } from "../../config.ts";

/**
 * The builder's container engine (FLOTILLA_BUILDER): builds images, pulls those to mirror, and
 * pushes them to the registry, through the Docker Engine API that podman, Docker and
 * balena-engine serve. Every call reports the engine's progress lines as they come.
 */

type EngineEvent = {
  stream?: string;
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { Digest?: string };
};

export class EngineError extends Error {}

export type Credentials = { username: string; password: string; serveraddress: string };

export function connectEngine(engine: NonNullable<Config["builder"]>["engine"]): ImageEngine {
  if ("socketPath" in engine) return new ImageEngine(new Docker({ socketPath: engine.socketPath }));
  const url = new URL(engine.url);
  return new ImageEngine(
    new Docker({
      protocol: url.protocol === "https:" ? "https" : "http",
      host: url.hostname,
      port: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
    }),
  );
}

export class ImageEngine {
  constructor(private readonly docker: Docker) {}

  /** Builds the context (a tar stream) as `tag`; each output line goes to `onLine`. */
  async build(
    context: Readable,
    options: { tag: string; dockerfile: string; buildargs: Record<string, string> },
    onLine: (line: string) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const stream = await this.docker.buildImage(context, {
      t: options.tag,
      dockerfile: options.dockerfile,
      buildargs: options.buildargs,
      rm: true,
      forcerm: true,
      ...(signal ? { abortSignal: signal } : {}),
    });
    await this.follow(stream, (event) => {
      for (const line of (event.stream ?? "").split("\n")) if (line.trim()) onLine(line.trimEnd());
    });
  }

  /** Pulls `image` (a mirrored `image:` service); says when it starts and ends, not every layer. */
  async pull(image: string, onLine: (line: string) => void): Promise<void> {
    const stream = await this.docker.pull(image);
    await this.follow(stream, (event) => {
      if (event.status && /^(Pulling from|Digest:|Status:)/.test(event.status)) onLine(event.status);
    });
  }

  async tag(image: string, repository: string, tag: string): Promise<void> {
    await this.docker.getImage(image).tag({ repo: repository, tag });
  }

  /** Pushes `repository:tag` and returns the manifest digest the registry stored it under. */
  async push(repository: string, tag: string, credentials: Credentials): Promise<string> {
    const stream = await this.docker.getImage(repository).push({ tag, authconfig: credentials });
    let digest: string | undefined;
    await this.follow(stream, (event) => {
      const found = event.aux?.Digest ?? /digest: (sha256:[0-9a-f]{64})/.exec(event.status ?? "")?.[1];
      if (found) digest = found;
    });
    if (!digest) throw new EngineError(`the engine did not say which digest the registry stored ${repository} under`);
    return digest;
  }

  /** The image's size in bytes, as the engine counts it (all layers, uncompressed). */
  async size(image: string): Promise<number> {
    const info = await this.docker.getImage(image).inspect();
    return Number(info.Size);
  }

  /** Removes a tag the builder made; the layers stay while another tag uses them. */
  async untag(image: string): Promise<void> {
    await this.docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
  }

  /** Follows an engine response stream to its end; an `error` event in it fails the call with its text. */
  private follow(stream: NodeJS.ReadableStream, onEvent: (event: EngineEvent) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      let failure: string | undefined;
      this.docker.modem.followProgress(
        stream,
        (error: Error | null) => {
          if (failure) reject(new EngineError(failure));
          else if (error) reject(new EngineError(error.message));
          else resolve();
        },
        (event: EngineEvent) => {
          const problem = event.errorDetail?.message ?? event.error;
          if (problem) failure ??= problem.trim();
          else onEvent(event);
        },
      );
    });
  }
}
