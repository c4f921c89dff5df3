import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type TestDnsServer } from "../../apps/server/test/support/dns-server.ts";
import { startSamlIdp, type TestSamlIdp } from "../../apps/server/test/support/saml-idp.ts";
import { launchBrowser, type RunningFlotilla, startFlotilla } from "../support/flotilla.ts";
import { logIn, shot } from "./accounts-helpers.ts";
import { payForPlan } from "./billing-helpers.ts";
import { api, consent } from "./fleets-helpers.ts";
import { DEMO, signIn } from "./web-helpers.ts";

const MEMBER_EMAIL = "demo-member@example.com";
const SSO = "acme";

/**
 * Enterprise single sign-on, end to end with a real SAML identity provider (the server tests'
 * samlify IdP, its own sign-in page included): the administrator adds the provider from its
 * metadata file, gives it a second organization and a team, and hands out the login URL; a new
 * person signs in at the IdP and lands in both organizations and the team; an existing password
 * account links itself after logging in and ticking both consent boxes; and the provider cannot
 * be removed while it has SAML accounts. The provider signs in only addresses at domains its
 * organizations verified: the administrator adds acme.test, publishes its TXT record on the
 * test DNS server the API asks (FLOTILLA_DNS_SERVERS) and verifies it; an address elsewhere is
 * refused with the domain named.
 */
describe("identity provider and SAML sign-in", () => {
  let flotilla: RunningFlotilla;
  let browser: Browser;
  let idp: TestSamlIdp;
  let dns: TestDnsServer;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    dns = await startDnsServer();
    [flotilla, idp, browser] = await Promise.all([
      startFlotilla({ FLOTILLA_DNS_SERVERS: dns.server }),
      startSamlIdp({ name: "Acme" }),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await idp?.close();
    await dns?.close();
    await flotilla?.stop();
  });

  const url = (p: string) => `${flotilla.dashboardUrl}${p}`;
  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(consent);
    contexts.push(context);
    return context.newPage();
  }
  /** Puts an organization on the Production plan (it includes SAML) through the billing API. */
  const production = (page: Page, orgId: number) => payForPlan(page, flotilla.apiUrl, orgId, "production-v2");

  /** A card as a person sees it, without the toasts in front of it. */
  async function cardShot(page: Page, card: ReturnType<Page["getByRole"]>, name: string) {
    const close = page.getByRole("button", { name: "Close" });
    while ((await close.count()) > 0) await close.first().click();
    await card.scrollIntoViewIfNeeded();
    fs.mkdirSync("/tmp/shots", { recursive: true });
    await card.screenshot({ path: `/tmp/shots/${name}.png` });
  }

  const orgNames = async (page: Page) =>
    (await api<{ d: Array<{ name: string }> }>(page, flotilla.apiUrl, "GET", "/v7/organization?$select=name")).d
      .map((org) => org.name)
      .sort();

  it("adds a provider from its metadata, signs a new person in, links an existing account, and keeps a provider with SAML accounts", async () => {
    const admin = await newPage();
    await admin.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: flotilla.dashboardUrl });
    await logIn(admin, flotilla.dashboardUrl, DEMO.email, DEMO.password);
    await admin.waitForURL(/\/fleets$/);
    const call = <T>(method: string, p: string, body?: unknown) => api<T>(admin, flotilla.apiUrl, method, p, body);
    const demoOrg = (
      await call<{ d: Array<{ id: number }> }>("GET", "/v7/organization?$select=id&$filter=name eq 'Demo'")
    ).d[0]?.id as number;
    const second = await call<{ id: number }>("POST", "/v7/organization", { name: "Acme Labs" });
    await call("POST", "/v7/team", {
      name: "SSO people",
      belongs_to__organization: demoOrg,
    });

    // Without a plan that includes SAML, the introduction's button is disabled and says why.
    await admin.goto(url("/identity-provider"));
    await admin.getByRole("heading", { name: "Enterprise single sign-on" }).waitFor();
    await admin.getByText("Single sign-on (SAML) is part of the Production and Enterprise plans.").first().waitFor();
    expect(await admin.getByRole("button", { name: "Add identity provider" }).isDisabled()).toBe(true);
    // The introduction links to the documentation (spec 3 §2).
    const docs = admin.getByRole("link", { name: "Read how single sign-on works" });
    expect(await docs.getAttribute("href")).toMatch(/^https:\/\/docs\./);
    expect(await docs.getAttribute("target")).toBe("_blank");
    await shot(admin, "idp-00-introduction");

    await production(admin, demoOrg);
    await production(admin, second.id);
    await admin.reload();
    // The menu offers the area once SAML is available.
    await admin
      .getByRole("navigation", { name: "Main navigation" })
      .getByRole("link", { name: "Identity provider" })
      .waitFor();

    // Add identity provider: the SSO identifier typed, the rest from the IdP's metadata file.
    await admin.getByRole("button", { name: "Add identity provider" }).click();
    const dialog = admin.getByRole("dialog", { name: "Add identity provider" });
    const add = dialog.getByRole("button", { name: "Add", exact: true });
    expect(await add.isDisabled()).toBe(true);
    await dialog.getByLabel("SSO identifier").fill("Acme Corp");
    await dialog.getByLabel("Issuer").click();
    await dialog
      .getByText("Your entry contains invalid characters")
      .waitFor()
      .catch(async (error: unknown) => {
        await admin.screenshot({ path: "/tmp/shots/idp-debug.png" });
        throw error;
      });
    await dialog.getByLabel("SSO identifier").fill(SSO);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "idp-e2e-"));
    const broken = path.join(dir, "broken.xml");
    fs.writeFileSync(broken, "<html>not metadata</html>");
    await dialog.getByTestId("metadata-input").setInputFiles(broken);
    await dialog.getByText(/^Failed to parse SAML metadata/).waitFor();
    const metadataFile = path.join(dir, "acme-idp-metadata.xml");
    fs.writeFileSync(metadataFile, idp.metadata());
    await dialog.getByTestId("metadata-input").setInputFiles(metadataFile);
    await dialog.getByText("Filled in from acme-idp-metadata.xml").waitFor();
    expect(await dialog.getByLabel("Entry point (SSO URL)").inputValue()).toBe(idp.ssoUrl);
    expect(await dialog.getByLabel("Issuer").inputValue()).toBe(idp.entityId);
    expect(await dialog.getByLabel("Certificate").inputValue()).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    await dialog.getByRole("combobox", { name: "Organization" }).click();
    await admin.getByRole("option", { name: "Demo" }).click();
    await shot(admin, "idp-02-dialog");
    await add.click();
    await admin.waitForURL(/\/identity-provider\/\d+$/);
    const providerId = Number(admin.url().split("/").pop());

    // The second organization, and the team of the first one.
    await admin.getByRole("button", { name: "Add organizations" }).click();
    const orgsDialog = admin.getByRole("dialog", { name: "Add organizations" });
    await orgsDialog.getByRole("combobox", { name: "Organizations" }).click();
    await admin.getByRole("option", { name: "Acme Labs" }).click();
    await admin.keyboard.press("Escape");
    await orgsDialog.getByRole("button", { name: "Add", exact: true }).click();
    await admin.getByText("Organizations added to the identity provider").waitFor();
    const table = admin.getByRole("table", { name: "Organizations" });
    await table.getByRole("row", { name: /Acme Labs/ }).waitFor();
    await table.getByRole("combobox", { name: "Team of Demo" }).click();
    await admin.getByRole("option", { name: "SSO people" }).click();
    await admin.getByText("Team updated").waitFor();
    await table.getByRole("combobox", { name: "Team of Demo" }).getByText("SSO people").waitFor();

    // The login URL, copied from the summary card.
    await admin.getByRole("button", { name: "Copy Login URL" }).click();
    const loginUrl = await admin.evaluate(() => navigator.clipboard.readText());
    expect(loginUrl).toBe(url(`/saml/${SSO}`));

    // The IdP's administrator registers Flotilla from its service provider metadata.
    idp.trust(await (await fetch(`${flotilla.apiUrl}/auth/saml/${SSO}/metadata`)).text());

    // Verified domains: none yet, so the provider signs nobody in.
    const domainsCard = admin.getByRole("region", { name: "Verified domains" });
    await domainsCard.getByText(/^No domains yet\./).waitFor();
    await domainsCard.getByRole("button", { name: "Add domain" }).click();
    const addDomain = admin.getByRole("dialog", { name: "Add domain" });
    await addDomain.getByRole("combobox", { name: "Organization" }).getByText("Demo").waitFor();
    await addDomain.getByLabel("Domain").fill("https://acme.test");
    await addDomain.getByLabel("Domain").blur();
    await addDomain.getByText("Enter a domain name such as example.com, without https:// or a path").waitFor();
    await addDomain.getByLabel("Domain").fill("Acme.test");
    await addDomain.getByRole("button", { name: "Add", exact: true }).click();
    await admin.getByText("acme.test added: publish its TXT record, then verify it").waitFor();
    const acmeDomain = domainsCard.getByRole("listitem", { name: "acme.test" });
    await acmeDomain.getByText("Pending", { exact: true }).waitFor();
    await acmeDomain.getByText("Not checked yet").waitFor();
    const record =
      (await acmeDomain
        .getByRole("group", { name: "TXT record" })
        .getByText(/^flotilla-verification=/)
        .textContent()) ?? "";
    expect(record).toMatch(/^flotilla-verification=[0-9a-f]{32}$/);
    // Checked before the record is published: still pending, with what to do.
    dns.setTxt("acme.test", ["v=spf1 -all"]);
    await acmeDomain.getByRole("button", { name: "Verify" }).click();
    await acmeDomain
      .getByText(`The TXT records at acme.test do not include ${record}. Publish it there and check again.`)
      .waitFor();
    await acmeDomain.getByText(/^Checked /).waitFor();
    await acmeDomain.getByText("Pending", { exact: true }).waitFor();
    await cardShot(admin, domainsCard, "idp-05-domain-pending");
    // Published: verified.
    dns.setTxt("acme.test", ["v=spf1 -all", record]);
    await acmeDomain.getByRole("button", { name: "Verify" }).click();
    await admin.getByText("acme.test is verified").waitFor();
    await acmeDomain.getByText("Verified", { exact: true }).waitFor();
    await acmeDomain.getByRole("button", { name: "Check again" }).waitFor();
    expect(await acmeDomain.getByRole("group", { name: "TXT record" }).count()).toBe(0);
    await cardShot(admin, domainsCard, "idp-06-domain-verified");
    // The member who links an existing account below has an address at example.com: verified too.
    const exampleDomain = await call<{ id: number; verification_record: string }>(
      "POST",
      `/identity/v1/organizations/${demoOrg}/domains`,
      { domain: "example.com" },
    );
    dns.setTxt("example.com", [exampleDomain.verification_record]);
    await call("POST", `/identity/v1/organizations/${demoOrg}/domains/${exampleDomain.id}/verify`, {});

    // An address at a domain nobody verified is refused, and the login page says why.
    const stranger = await newPage();
    await stranger.goto(url(`/saml/${SSO}`));
    await stranger.waitForURL((u) => u.href.startsWith(idp.ssoUrl));
    await stranger.getByLabel("Email").fill("someone@elsewhere.test");
    await stranger.getByRole("button", { name: "Sign in" }).click();
    await stranger.waitForURL(/\/login\?saml_error=saml_domain_not_verified/);
    await stranger
      .getByRole("alert")
      .getByText(
        "This identity provider may not sign in addresses at elsewhere.test: its organization has not verified that domain.",
      )
      .waitFor();
    await shot(stranger, "idp-07-domain-refused");

    // A new person opens the login URL, signs in at the IdP, and lands signed in.
    const person = await newPage();
    await person.goto(loginUrl);
    await person.waitForURL((u) => u.href.startsWith(idp.ssoUrl));
    await person.getByLabel("Email").fill("new.person@acme.test");
    await person.getByRole("button", { name: "Sign in" }).click();
    await person.waitForURL(/\/fleets$/, { timeout: 30_000 });
    expect(await orgNames(person)).toEqual(expect.arrayContaining(["Acme Labs", "Demo"]));
    const teams = await api<{ d: Array<{ is_member_of__team: Array<{ name: string }> }> }>(
      person,
      flotilla.apiUrl,
      "GET",
      "/v7/team_membership?$select=id&$expand=is_member_of__team($select=name)",
    );
    expect(teams.d.flatMap((row) => row.is_member_of__team.map((t) => t.name))).toContain("SSO people");

    // An existing password account: the IdP's answer asks its owner to log in and consent.
    const member = await newPage();
    await member.goto(loginUrl);
    await member.waitForURL((u) => u.href.startsWith(idp.ssoUrl));
    await member.getByLabel("Email").fill(MEMBER_EMAIL);
    await member.getByRole("button", { name: "Sign in" }).click();
    await member.waitForURL(/\/saml\/callback\/merge\?/);
    await member.getByText(`You are not logged in. Log in to the account of ${MEMBER_EMAIL} first`).waitFor();
    await member.getByRole("link", { name: "Log in" }).click();
    await member.waitForURL(/\/login\?redirect=/);
    await signIn(member, MEMBER_EMAIL, DEMO.password);
    await member.waitForURL(/\/saml\/callback\/merge\?/);
    const link = member.getByRole("button", { name: "Link accounts" });
    await link.waitFor();
    expect(await link.isDisabled()).toBe(true);
    await member.getByLabel("I want to link my account to this identity provider").check();
    expect(await link.isDisabled()).toBe(true);
    await member.getByLabel(/I understand that the administrators/).check();
    await shot(member, "idp-03-merge-page");
    await link.click();
    await member.waitForURL(/\/fleets$/);
    expect(await orgNames(member)).toContain("Acme Labs");

    // Two SAML accounts now: removing the provider is refused, with the reason.
    const accounts = await call<{ d: unknown[] }>(
      "GET",
      `/v7/saml_account?$select=id&$filter=was_generated_by__identity_provider eq ${providerId}`,
    );
    expect(accounts.d).toHaveLength(2);
    await admin.reload();
    // The provider's page lists them, by user and identity at the provider.
    const samlTable = admin.getByRole("table", { name: "SAML accounts" });
    await expect.poll(() => samlTable.getByRole("button", { name: /^Revoke the SAML account/ }).count()).toBe(2);
    await admin.getByRole("heading", { name: "Identity provider", level: 1 }).scrollIntoViewIfNeeded();
    await shot(admin, "idp-01-provider-page");

    // Edit opens the same form with the stored values; saving keeps them.
    await admin.getByRole("button", { name: "Edit", exact: true }).click();
    const edit = admin.getByRole("dialog", { name: "Edit identity provider" });
    expect(await edit.getByLabel("SSO identifier").inputValue()).toBe(SSO);
    expect(await edit.getByLabel("Issuer").inputValue()).toBe(idp.entityId);
    await edit.getByRole("button", { name: "Save" }).click();
    await admin.getByText("Identity provider updated").waitFor();
    await admin.getByRole("button", { name: "Remove", exact: true }).click();
    const confirm = admin.getByRole("dialog", { name: "Remove identity provider" });
    await confirm.getByRole("button", { name: "Remove", exact: true }).click();
    await confirm
      .getByText("This identity provider still has SAML accounts. Revoke them before removing it.")
      .waitFor();
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect((await call<{ d: unknown[] }>("GET", `/v7/identity_provider?$select=id`)).d).toHaveLength(1);

    // The last organization stays: Acme Labs goes (after a confirmation), Demo is refused with the warning.
    await table.getByRole("button", { name: "Remove Acme Labs" }).click();
    const leave = admin.getByRole("dialog", { name: "Remove organization from identity provider" });
    await leave.getByText("Acme Labs").waitFor();
    await shot(admin, "idp-06-remove-organization");
    await leave.getByRole("button", { name: "Remove organization" }).click();
    await admin.getByText("Organization removed from the identity provider").waitFor();
    await table.getByRole("button", { name: "Remove Demo" }).click();
    await admin.getByText("An identity provider must have at least one organization").waitFor();

    // A non-numeric id and a provider that is not there lead back to /identity-provider.
    await admin.goto(url("/identity-provider/abc"));
    await admin.getByText("invalid id passed in url", { exact: false }).first().waitFor();
    await admin.goto(url("/identity-provider/9999"));
    await admin.getByText(/^Identity provider not found/).waitFor();

    // `/identity-provider` leads to the provider the administrator manages.
    await admin.goto(url("/identity-provider"));
    await admin.waitForURL(url(`/identity-provider/${providerId}`));

    // A provider whose organization lost SAML with its plan says so at /saml/{sso}.
    await call("PATCH", `/billing/v1/account/${demoOrg}/plan`, { tier: "free", cycle: "monthly" });
    const visitor = await newPage();
    await visitor.goto(url(`/saml/${SSO}`));
    await visitor.waitForURL(/\/saml\?saml_error=saml_provider_not_in_plan/);
    await visitor
      .getByRole("alert")
      .getByText(
        `Single sign-on with ${SSO} is not available: none of its organizations has SAML in its plan any more.`,
        {
          exact: false,
        },
      )
      .waitFor();
    expect(await visitor.getByText("Unknown SSO identifier", { exact: false }).count()).toBe(0);
    await shot(visitor, "idp-07-plan-lapsed");

    // Its SAML accounts are revoked from the page (after a confirmation); then the provider goes.
    await admin.reload();
    for (let left = 2; left > 0; left -= 1) {
      await samlTable
        .getByRole("button", { name: /^Revoke the SAML account/ })
        .first()
        .click();
      const revoke = admin.getByRole("dialog", { name: "Revoke SAML account" });
      await revoke.getByRole("button", { name: "Revoke" }).click();
      await revoke.waitFor({ state: "hidden" });
      await expect
        .poll(() => samlTable.getByRole("button", { name: /^Revoke the SAML account/ }).count())
        .toBe(left - 1);
    }
    await admin.getByText("Nobody has signed in through this identity provider yet.").waitFor();
    await admin.getByRole("button", { name: "Remove", exact: true }).click();
    await admin
      .getByRole("dialog", { name: "Remove identity provider" })
      .getByRole("button", { name: "Remove", exact: true })
      .click();
    await admin.getByText("Identity provider removed").waitFor();
    await admin.waitForURL(url("/identity-provider"));
    fs.rmSync(dir, { recursive: true, force: true });
  }, 180_000);

  it("asks for the SSO identifier, and says so of an unknown one", async () => {
    const page = await newPage();
    await page.goto(url("/login"));
    await page.getByRole("link", { name: "Sign in with SSO" }).click();
    await page.waitForURL(url("/saml"));
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText("This field is required").waitFor();
    await page.getByLabel("SSO identifier").fill("nobody-here");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(/\/saml\?saml_error=unknown_sso_identifier/);
    await page.getByRole("alert").getByText("Unknown SSO identifier: nobody-here").waitFor();
    await shot(page, "idp-04-unknown-sso");
    // A failed sign-in lands on the login page with its reason.
    await page.goto(url("/login?saml_error=saml_login_failed"));
    await page
      .getByRole("alert")
      .getByText(/^Single sign-on failed\. Please try again/)
      .waitFor();
  });
});
