import { opensPlainLogin } from "./features/auth/cold-login.ts";
import { createBootstrap, setLoadFailedMarker } from "./lib/bootstrap.ts";
import { withChunkTimeout } from "./lib/chunk.ts";
import { loadRuntimeConfig } from "./lib/config.ts";
import { fetchFeatureFlags } from "./lib/feature-flags.ts";
import { runStorageMigrations } from "./lib/storage-migrations.ts";
import { bootstrap as bootstrapTexts } from "./locales/en.json?public";

/**
 * Start-up: read /config.json, then the feature flags (4000 ms at most; defaults otherwise)
 * while the app chunk loads, render. A cold load of /login without a session opens the plain
 * login page instead, without React, MUI or the router (issue performance-2); signing in there
 * navigates the document, which starts the app. Kept free of React and MUI so that a
 * failure can still be shown: the page gets the load-failed marker (`<html data-load-failed>`)
 * and a message, and the whole start-up runs again by itself after 10 seconds (spec 1 §8).
 */

const container = document.getElementById("root") ?? document.body.appendChild(document.createElement("div"));

function element<K extends keyof HTMLElementTagNameMap>(tag: K, style: string, text?: string) {
  const node = document.createElement(tag);
  node.setAttribute("style", style);
  if (text !== undefined) node.textContent = text;
  return node;
}

function describe(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  return typeof error === "string" && error ? error : "Unknown error";
}

function showLoadFailed(error: unknown, retry: () => void) {
  const panel = element(
    "div",
    "max-width:440px;margin:0 24px;padding:24px;background:#fff;border:1px solid #e3e6eb;border-radius:8px;box-shadow:0 8px 24px rgba(11,18,32,.08)",
  );
  panel.setAttribute("role", "alert");
  panel.append(
    element("h1", "margin:0 0 8px;font-size:20px;font-weight:650;color:#1b2230", bootstrapTexts.failed_title),
    element("p", "margin:0 0 12px;font-size:14px;line-height:1.5;color:#5b6576", bootstrapTexts.failed_text),
    element(
      "p",
      "margin:0 0 16px;padding:8px 12px;font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f4f5f7;border-radius:6px;color:#1b2230;word-break:break-word",
      describe(error),
    ),
  );
  const button = element(
    "button",
    "font-family:inherit;font-size:14px;font-weight:600;line-height:1;padding:10px 16px;border:0;border-radius:6px;background:#4f46e5;color:#fff;cursor:pointer",
    bootstrapTexts.retry_now,
  );
  button.type = "button";
  button.addEventListener("click", retry);
  panel.append(button);
  const frame = element("div", "display:flex;min-height:100vh;align-items:center;justify-content:center");
  frame.append(panel);
  container.replaceChildren(frame);
}

/** A failed migration of the stored data, for the app's toast (kept across start-up retries). */
let storageMigrationFailed = false;

const bootstrap = createBootstrap({
  async run() {
    const config = await loadRuntimeConfig();
    // Stored data first, before anything reads a preference; a failure is reported, not fatal.
    runStorageMigrations({
      report(failure) {
        console.error(`Flotilla: stored data migration to version ${failure.failedAt} failed`, failure.error);
        storageMigrationFailed = true;
      },
    });
    // Never rejects: a slow or failed flag fetch gives the defaults and the start-up carries on.
    const featureFlags = fetchFeatureFlags(config.apiUrl).then(({ flags, source }) => {
      if (source !== "server") console.warn(`Flotilla: feature flags not read (${source}); all experiments are off`);
      return flags;
    });
    if (opensPlainLogin(window.location, config, storageMigrationFailed)) {
      const { startLoginEntry } = await withChunkTimeout(import("./features/auth/login-entry.ts"));
      await featureFlags;
      // Once the person starts on the form, the app's code is fetched for the page after it.
      startLoginEntry(container, config, () => void import("./app.tsx").catch(() => undefined));
      return;
    }
    const { startApp } = await withChunkTimeout(import("./app.tsx"));
    await startApp(container, config, await featureFlags, { storageMigrationFailed });
  },
  onFailure(error) {
    console.error("Flotilla could not start; retrying in 10 s", error);
    setLoadFailedMarker(true);
    showLoadFailed(error, () => void bootstrap.retryNow());
  },
  onSuccess() {
    setLoadFailedMarker(false);
  },
});

void bootstrap.start();
