import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import * as samlify from "samlify";
import { expect } from "vitest";
import { selfSignedCertificate } from "../../src/lib/key-pair.ts";
import type { TestApp } from "../harness.ts";
import { client } from "./accounts.ts";

// samlify validates XML against the SAML schemas only through a plug-in validator (Java or
// WebAssembly). This IdP only reads our own AuthnRequests to answer them, so it skips that step;
// the service provider under test (node-saml) does its own validation.
samlify.setSchemaValidator({ validate: async () => "skipped" });

/** What the test IdP puts into one answer; the defaults make a valid, signed sign-in. */
export type AnswerOptions = {
  email: string;
  displayName?: string;
  /** NameID (remote id); defaults to the email. */
  nameId?: string;
  audience?: string;
  recipient?: string;
  /** Assertion validity, relative to now. */
  notBeforeMs?: number;
  notOnOrAfterMs?: number;
  /** An assertion without a signature. */
  unsigned?: boolean;
  /** Answer this request id instead of the one parsed from the AuthnRequest. */
  inResponseTo?: string;
};

export type TestSamlIdp = Awaited<ReturnType<typeof startSamlIdp>>;

const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

/**
 * A SAML 2.0 identity provider on 127.0.0.1 (samlify as the IdP): its metadata at `/metadata`,
 * single sign-on at `/sso` (HTTP-Redirect binding). A browser gets a "Sign in as" form there
 * that posts the signed answer to the service provider's ACS; tests can also answer an
 * AuthnRequest directly with `answer` and post the result themselves.
 */
export async function startSamlIdp(options: { name?: string } = {}) {
  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const certificatePem = selfSignedCertificate(keyPem, `${options.name ?? "Test"} IdP`);
  let idp: ReturnType<typeof samlify.IdentityProvider> | undefined;
  let spMetadata = "";

  /** Answers the AuthnRequest in `ssoUrl` (the redirect our server sends the browser to). */
  async function answer(ssoUrl: string, opts: AnswerOptions): Promise<{ acs: string; samlResponse: string }> {
    if (!idp) throw new Error("IdP not started");
    const sp = samlify.ServiceProvider({
      metadata: opts.unsigned
        ? spMetadata.replace(/WantAssertionsSigned="true"/, 'WantAssertionsSigned="false"')
        : spMetadata,
    });
    const url = new URL(ssoUrl);
    const query = Object.fromEntries(url.searchParams);
    // The signed octet string is the raw query without its Signature (SAML bindings §3.4.4.1).
    const octetString = url.search
      .slice(1)
      .split("&")
      .filter((pair) => !pair.startsWith("Signature="))
      .join("&");
    const parsed = await idp.parseLoginRequest(sp, "redirect", { query, octetString });
    const request = parsed.extract.request as { id: string };
    const acs = sp.entityMeta.getAssertionConsumerService("post") as string;
    const entityId = sp.entityMeta.getEntityID();
    const issuer = idp.entityMeta.getEntityID();
    const nameId = opts.nameId ?? opts.email;
    const attributes = [
      `<saml:Attribute Name="email"><saml:AttributeValue xsi:type="xs:string">${opts.email}</saml:AttributeValue></saml:Attribute>`,
      ...(opts.displayName
        ? [
            `<saml:Attribute Name="displayName"><saml:AttributeValue xsi:type="xs:string">${opts.displayName}</saml:AttributeValue></saml:Attribute>`,
          ]
        : []),
    ].join("");
    const result = await idp.createLoginResponse(
      sp,
      { extract: { request: { id: opts.inResponseTo ?? request.id } } },
      "post",
      { email: opts.email },
      (template: string) => {
        const id = `_${crypto.randomUUID()}`;
        const values: Record<string, string> = {
          ID: id,
          AssertionID: `_${crypto.randomUUID()}`,
          Destination: acs,
          Audience: opts.audience ?? entityId,
          EntityID: entityId,
          SubjectRecipient: opts.recipient ?? acs,
          Issuer: issuer,
          IssueInstant: iso(0),
          StatusCode: "urn:oasis:names:tc:SAML:2.0:status:Success",
          ConditionsNotBefore: iso(opts.notBeforeMs ?? -60_000),
          ConditionsNotOnOrAfter: iso(opts.notOnOrAfterMs ?? 5 * 60_000),
          SubjectConfirmationDataNotOnOrAfter: iso(opts.notOnOrAfterMs ?? 5 * 60_000),
          NameIDFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
          NameID: nameId,
          InResponseTo: opts.inResponseTo ?? request.id,
          AuthnStatement: `<saml:AuthnStatement AuthnInstant="${iso(0)}" SessionIndex="${id}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
          AttributeStatement: `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`,
        };
        return { id, context: template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole) };
      },
    );
    return { acs, samlResponse: result.context };
  }

  const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://idp");
    if (url.pathname === "/metadata") {
      res.writeHead(200, { "content-type": "application/xml" }).end(metadata());
      return;
    }
    if (url.pathname === "/sso" && req.method === "GET") {
      // The IdP's own sign-in page: who signs in is typed here, as at a real IdP.
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(
          `<!doctype html><title>Test IdP</title><form method="post" action="/sso${escapeHtml(url.search)}">` +
            `<label>Email <input name="email" type="email"></label><button>Sign in</button></form>`,
        );
      return;
    }
    if (url.pathname === "/sso" && req.method === "POST") {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        const email = new URLSearchParams(body).get("email") ?? "";
        answer(url.href, { email })
          .then(({ acs, samlResponse }) => {
            res
              .writeHead(200, { "content-type": "text/html" })
              .end(
                `<!doctype html><title>Signing in</title><form method="post" action="${escapeHtml(acs)}">` +
                  `<input type="hidden" name="SAMLResponse" value="${escapeHtml(samlResponse)}"><button>Continue</button></form>` +
                  "<script>document.forms[0].submit()</script>",
              );
          })
          .catch((error: unknown) => res.writeHead(500).end(String(error)));
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  idp = samlify.IdentityProvider({
    entityID: `${base}/metadata`,
    signingCert: certificatePem,
    privateKey: keyPem,
    wantAuthnRequestsSigned: true,
    singleSignOnService: [{ Binding: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect", Location: `${base}/sso` }],
  });
  const metadata = () => idp?.getMetadata() ?? "";

  return {
    url: base,
    entityId: `${base}/metadata`,
    ssoUrl: `${base}/sso`,
    certificatePem,
    metadata,
    /** The service provider's metadata (GET /auth/saml/{sso}/metadata), so the IdP knows its ACS and key. */
    trust(serviceProviderMetadata: string) {
      spMetadata = serviceProviderMetadata;
    },
    answer,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * An identity provider for `provider` under `sso`, authorized for the organizations (the first
 * one granting `team`), whose metadata the IdP then trusts. Answers its id.
 */
export async function addSamlProvider(
  t: TestApp,
  token: string,
  sso: string,
  provider: TestSamlIdp,
  organizations: number[],
  team?: number,
) {
  const api = client(t);
  const created = await api.post(
    "/v7/identity_provider",
    {
      sso_identifier: sso,
      entry_point: provider.ssoUrl,
      issuer: provider.entityId,
      certificate: provider.certificatePem,
    },
    token,
  );
  expect(created.status, created.text).toBe(201);
  const id = Number(created.json.id);
  for (const [i, organization] of organizations.entries()) {
    const membership = await api.post(
      "/v7/identity_provider_membership",
      {
        organization,
        is_authorized_by__identity_provider: id,
        ...(i === 0 && team ? { grants_access_to__team: team } : {}),
      },
      token,
    );
    expect(membership.status, membership.text).toBe(201);
  }
  const metadata = await fetch(`${t.url}/auth/saml/${sso}/metadata`);
  expect(metadata.status).toBe(200);
  provider.trust(await metadata.text());
  return id;
}
