import { afterAll, inject } from "vitest";
import { cleanUp, usePgliteTemplate } from "./flotilla.ts";

usePgliteTemplate(inject("pgliteTemplate"));
// Every spec file leaves no server, database or data directory behind.
afterAll(cleanUp);
