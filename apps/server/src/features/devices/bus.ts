import crypto from "node:crypto";
import { Redis } from "ioredis";

/**
 * What API instances say to each other (DESIGN §4: relays and cache drops cross instances):
 * Redis pub/sub when REDIS_URL is set, nothing to say when one instance runs alone. Each
 * instance has an id; `toAll` messages reach every other instance, `toInstance` one of them.
 */
export type Bus = {
  readonly instanceId: string;
  /** Shared key-value store for heartbeat times; undefined without Redis. */
  readonly redis: Redis | undefined;
  /** Prefix of every Redis key and channel: instances of one database share it, others never collide. */
  readonly prefix: string;
  toAll(topic: string, payload: unknown): Promise<void>;
  /** Answers how many instances got it: 0 when that instance is gone (its subscription went with it). */
  toInstance(instanceId: string, topic: string, payload: unknown): Promise<number>;
  on(topic: string, handler: (payload: unknown, from: string) => void): void;
  close(): Promise<void>;
};

type Envelope = { topic: string; from: string; payload: unknown };

export function createLocalBus(): Bus {
  return {
    instanceId: crypto.randomUUID(),
    redis: undefined,
    prefix: "flotilla:",
    toAll: async () => undefined,
    toInstance: async () => 0,
    on: () => undefined,
    close: async () => undefined,
  };
}

export async function createRedisBus(url: string, prefix: string): Promise<Bus> {
  const instanceId = crypto.randomUUID();
  const channelAll = `${prefix}all`;
  const channelOf = (id: string) => `${prefix}instance:${id}`;
  const options = { maxRetriesPerRequest: 3, lazyConnect: true } as const;
  const redis = new Redis(url, options);
  const subscriber = new Redis(url, options);
  await Promise.all([redis.connect(), subscriber.connect()]);
  const handlers = new Map<string, ((payload: unknown, from: string) => void)[]>();
  subscriber.on("message", (_channel: string, message: string) => {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(message) as Envelope;
    } catch {
      return;
    }
    if (envelope.from === instanceId) return;
    for (const handler of handlers.get(envelope.topic) ?? []) handler(envelope.payload, envelope.from);
  });
  await subscriber.subscribe(channelAll, channelOf(instanceId));
  const publish = (channel: string, topic: string, payload: unknown) =>
    redis.publish(channel, JSON.stringify({ topic, from: instanceId, payload } satisfies Envelope));
  return {
    instanceId,
    redis,
    prefix,
    toAll: async (topic, payload) => {
      await publish(channelAll, topic, payload);
    },
    toInstance: (id, topic, payload) => publish(channelOf(id), topic, payload),
    on(topic, handler) {
      handlers.set(topic, [...(handlers.get(topic) ?? []), handler]);
    },
    async close() {
      subscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
