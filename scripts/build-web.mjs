// Runs after `npm install` (the root `prepare` script): the dashboard is built before `npm start`.
import { buildWebIfStale } from "./lib/web-build.mjs";

buildWebIfStale();
