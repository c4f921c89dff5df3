import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "../e2e/support/flotilla.ts";

export interface LoginPageJs {
  /** Sum of the gzipped sizes (level 6, what a compressing proxy sends) of every script the page loaded. */
  gzipBytes: number;
  rawBytes: number;
  files: Array<{ name: string; raw: number; gzip: number }>;
}

/**
 * The JavaScript a person's browser downloads before they can type on the login page (issue 17),
 * measured with Chromium: a fresh profile opens `/login`, waits for the username field and for
 * the network to go quiet, and every script response is gzipped to count what it weighs on the wire.
 */
export async function measureLoginPageJs(dashboardUrl: string): Promise<LoginPageJs> {
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const pending: Array<Promise<{ name: string; raw: number; gzip: number } | undefined>> = [];
    page.on("response", (response) => {
      const type = response.headers()["content-type"] ?? "";
      if (!type.includes("javascript")) return;
      pending.push(
        response.body().then(
          (body) => ({ name: new URL(response.url()).pathname, raw: body.length, gzip: gzipSync(body).length }),
          () => undefined,
        ),
      );
    });
    await page.goto(`${dashboardUrl}/login`);
    await page.getByLabel("Email or username").waitFor();
    await page.waitForLoadState("networkidle");
    const files = (await Promise.all(pending)).filter((file) => file !== undefined);
    files.sort((a, b) => b.gzip - a.gzip);
    return {
      gzipBytes: files.reduce((sum, file) => sum + file.gzip, 0),
      rawBytes: files.reduce((sum, file) => sum + file.raw, 0),
      files,
    };
  } finally {
    await browser.close();
  }
}
