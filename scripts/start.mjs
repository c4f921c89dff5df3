// `npm start`: build the dashboard if needed, then run the server in this same process.
import { buildWebIfStale } from "./lib/web-build.mjs";

buildWebIfStale();
await import("../apps/server/bin/flotilla-server.mjs");
