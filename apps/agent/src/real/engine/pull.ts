import type Docker from "dockerode";

/** Whether the engine has `image` already (a pull is then nothing to do). */
export async function hasImage(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch {
    return false;
  }
}

type PullEvent = {
  id?: string;
  status?: string;
  error?: string;
  progressDetail?: { current?: number; total?: number };
};

/**
 * Pulls `image`, telling the progress in percent as the engine reports bytes per layer (the sum
 * of what is known so far; layers already present count as done).
 */
export async function pullImage(
  docker: Docker,
  image: string,
  onProgress: (percent: number) => void,
  auth?: Docker.AuthConfig,
): Promise<void> {
  const stream = await docker.pull(image, auth ? { authconfig: auth } : {});
  const layers = new Map<string, { current: number; total: number }>();
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null, events: PullEvent[]) => {
        const failed = events?.find((event) => event.error);
        if (error || failed) reject(error ?? new Error(failed?.error));
        else resolve();
      },
      (event: PullEvent) => {
        if (!event.id) return;
        const detail = event.progressDetail;
        if (detail?.total) layers.set(event.id, { current: detail.current ?? 0, total: detail.total });
        else if (/complete|already exists/i.test(event.status ?? "")) {
          const layer = layers.get(event.id);
          if (layer) layer.current = layer.total;
        }
        let current = 0;
        let total = 0;
        for (const layer of layers.values()) {
          current += layer.current;
          total += layer.total;
        }
        if (total > 0) onProgress(Math.min(99, Math.floor((current / total) * 100)));
      },
    );
  });
  onProgress(100);
}
