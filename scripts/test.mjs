// `npm test`: lint, typecheck, unit + integration tests, browser end-to-end tests.
// `npm test -- --database-only`: only what depends on the database (the server's tests and the
// server-process spec), for a second pass on another database.
// Every step runs; the last line is the summary "tests: N passed, N failed".
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildWebIfStale } from "./lib/web-build.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const reports = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-test-"));
const failedSteps = [];
let passed = 0;
let failed = 0;
const failures = [];

function step(name, command, args, options = {}) {
  process.stdout.write(`\n━━ ${name}: ${[command, ...args].join(" ")}\n`);
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: ROOT, stdio: "inherit", ...options });
  // Each step's time, to see where the 30 minutes of CI go.
  process.stdout.write(
    `━━ ${name}: ${result.status === 0 ? "done" : "failed"} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  if (result.status !== 0) failedSteps.push(name);
  return result.status === 0;
}

function vitest(name, args) {
  const report = path.join(reports, `${name}.json`);
  step(name, "npx", ["vitest", "run", ...args, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`]);
  if (!fs.existsSync(report)) {
    failed += 1; // the runner itself broke: count it, never report a silent pass
    return;
  }
  const summary = JSON.parse(fs.readFileSync(report, "utf8"));
  passed += summary.numPassedTests;
  failed += summary.numFailedTests;
  // Named again at the end: CI keeps only the tail of the output.
  for (const file of summary.testResults) {
    const where = path.relative(ROOT, file.name);
    if (file.status === "failed" && !file.assertionResults.some((t) => t.status === "failed")) {
      failures.push(`${where}: ${firstLine(file.message)}`);
    }
    for (const test of file.assertionResults.filter((t) => t.status === "failed")) {
      failures.push(`${where} > ${test.fullName}: ${firstLine(test.failureMessages[0])}`);
    }
  }
  // A file that failed to load has no failed test but is a failure all the same.
  if (!summary.success && summary.numFailedTests === 0) failed += 1;
}

function firstLine(text = "") {
  return text.split("\n").find((line) => line.trim()) ?? "";
}

const databaseOnly = process.argv.includes("--database-only");
if (!databaseOnly) {
  step("lint", "npx", ["biome", "ci", "."]);
  step("typecheck", "npx", ["tsc", "-b"]);
}
const browserReady = step("chromium", "bash", ["scripts/ensure-chromium.sh"]);
// The agent's tests run real containers through podman's Docker Engine API (apps/agent/test/containers-setup.ts);
// the server's registry token tests run a real docker-registry (apps/server/test/support/registry.ts).
const containersReady = step("containers", "bash", ["scripts/ensure-containers.sh"]);
buildWebIfStale();
// Two workers on the two cores CI has (vitest would use one): the suites wait on I/O often.
vitest("unit-and-integration", ["--maxWorkers=2", ...(databaseOnly ? ["--project", "server"] : [])]);
// Without podman the agent's container tests fail on their own; count the missing step too.
if (!containersReady) failed += 1;
if (!browserReady) failed += 1;
else vitest("e2e", ["--root", "e2e", ...(databaseOnly ? ["specs/server-process.e2e.ts"] : [])]);

fs.rmSync(reports, { recursive: true, force: true });
for (const failure of failures) process.stdout.write(`\nFAILED ${failure}`);
if (failedSteps.length) process.stdout.write(`\nFailed steps: ${failedSteps.join(", ")}\n`);
process.stdout.write(`\ntests: ${passed} passed, ${failed} failed\n`);
process.exit(failedSteps.length || failed ? 1 : 0);
