import WebSocket from "ws";

/**
 * A stand-in for the agent's cloudlink side (docs/device-protocol.md "Cloudlink"): connects
 * with the device key, records the requests it gets and answers them with `answer`.
 */
export type AgentRequest = { type: "request"; id: string; action: string; data: Record<string, unknown> };
export type AgentAnswer = { status: number; body: unknown };

export async function connectAgent(
  apiUrl: string,
  deviceKey: string,
  answer: (request: AgentRequest) => AgentAnswer | undefined = () => ({
    status: 200,
    body: { Data: "OK", Error: null },
  }),
  headers: Record<string, string> = {},
) {
  const socket = new WebSocket(`${apiUrl.replace(/^http/, "ws")}/cloudlink/v1/connect`, {
    headers: { authorization: `Bearer ${deviceKey}`, ...headers },
  });
  const received: AgentRequest[] = [];
  socket.on("message", (raw) => {
    const request = JSON.parse(raw.toString()) as AgentRequest;
    received.push(request);
    const reply = answer(request);
    if (reply) socket.send(JSON.stringify({ type: "response", id: request.id, ...reply }));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const closed = new Promise<{ code: number }>((resolve) => socket.once("close", (code) => resolve({ code })));
  return {
    socket,
    received,
    closed,
    async close() {
      socket.close();
      await closed;
    },
  };
}

/** Polls until `check` holds (background writes land a moment after the event). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("condition not met in time");
}
