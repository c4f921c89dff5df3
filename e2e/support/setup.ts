import { afterAll } from "vitest";
import { cleanUp } from "./flotilla.ts";

// Every spec file leaves no server, database or data directory behind.
afterAll(cleanUp);
