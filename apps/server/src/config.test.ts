import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, mapTilesSource } from "./config.ts";

describe("configuration", () => {
  it("defaults to the dashboard on 8080, the API on 8081 and PGlite in ./data", () => {
    const config = loadConfig({});
    expect(config.dashboardPort).toBe(8080);
    expect(config.apiPort).toBe(8081);
    expect(config.publicUrl).toBe("http://localhost:8080");
    expect(config.apiUrl).toBe("http://localhost:8081");
    expect(config.dataDir).toMatch(/\/data$/);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.demo).toBe(true);
    expect(config.captcha).toBe("pow");
    expect(config.emailVerification).toBe("required");
  });

  it("retries a failed webhook delivery after 30 s unless FLOTILLA_WEBHOOK_RETRY_BASE_MS says otherwise", () => {
    expect(loadConfig({}).webhookRetryBaseMs).toBe(30_000);
    expect(loadConfig({ FLOTILLA_WEBHOOK_RETRY_BASE_MS: "500" }).webhookRetryBaseMs).toBe(500);
  });

  it("keeps audit log entries a year unless FLOTILLA_AUDIT_RETENTION_DAYS says otherwise", () => {
    expect(loadConfig({}).auditRetentionDays).toBe(365);
    expect(loadConfig({ FLOTILLA_AUDIT_RETENTION_DAYS: "90" }).auditRetentionDays).toBe(90);
  });

  it("keeps device log lines 30 days unless FLOTILLA_DEVICE_LOG_RETENTION_DAYS says otherwise", () => {
    expect(loadConfig({}).deviceLogRetentionDays).toBe(30);
    expect(loadConfig({ FLOTILLA_DEVICE_LOG_RETENTION_DAYS: "7" }).deviceLogRetentionDays).toBe(7);
    expect(() => loadConfig({ FLOTILLA_DEVICE_LOG_RETENTION_DAYS: "0" })).toThrow(/FLOTILLA_DEVICE_LOG_RETENTION_DAYS/);
  });

  it("derives the public URLs from the ports and trims trailing slashes", () => {
    expect(loadConfig({ FLOTILLA_PORT: "9000", FLOTILLA_API_PORT: "9001" }).apiUrl).toBe("http://localhost:9001");
    expect(loadConfig({ FLOTILLA_API_URL: "https://api.example.com/" }).apiUrl).toBe("https://api.example.com");
  });

  it("turns the demo off by default on a PostgreSQL server, and on with FLOTILLA_DEMO=1", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://localhost/x" }).demo).toBe(false);
    expect(loadConfig({ DATABASE_URL: "postgres://localhost/x", FLOTILLA_DEMO: "1" }).demo).toBe(true);
    expect(loadConfig({ FLOTILLA_DEMO: "0" }).demo).toBe(false);
    expect(loadConfig({}).demoDevices).toBe(10);
    expect(loadConfig({ FLOTILLA_DEMO_DEVICES: "0" }).demoDevices).toBe(0);
    expect(loadConfig({}).demoBusyIntervalMs).toBe(3000);
    expect(loadConfig({ FLOTILLA_DEMO_BUSY_INTERVAL_MS: "1000" }).demoBusyIntervalMs).toBe(1000);
  });

  it.each([
    ["FLOTILLA_API_PORT", "abc", "must be a port number"],
    ["FLOTILLA_PORT", "70000", "must be between 0 and 65535"],
    ["FLOTILLA_SSH_PORT", "ssh", "must be a port number"],
    ["FLOTILLA_SSH_PORT", "8081", "must differ from FLOTILLA_PORT and FLOTILLA_API_PORT"],
    ["DATABASE_URL", "nonsense://", "must be a postgres:// or postgresql:// URL"],
    ["FLOTILLA_PUBLIC_URL", "ftp://x", "must be an http(s) URL"],
    ["FLOTILLA_SECRET", "short", "must be at least 32 bytes long"],
    ["FLOTILLA_CAPTCHA", "maybe", "must be pow, recaptcha or off"],
    ["FLOTILLA_EMAIL_VERIFICATION", "never", "must be required or optional"],
    ["FLOTILLA_DEMO", "yes", "must be 0 or 1"],
    ["FLOTILLA_DEMO_DEVICES", "101", "must be a whole number from 0 to 100"],
    ["FLOTILLA_DEMO_DEVICES", "2.5", "must be a whole number from 0 to 100"],
    ["FLOTILLA_DEMO_BUSY_INTERVAL_MS", "100", "must be a whole number from 500 to 60000"],
    ["SMTP_URL", "mail.example.com", "must be an smtp:// or smtps:// URL"],
    ["SMTP_FROM", "Flotilla", 'must be an address, or "Name <address>"'],
    ["FLOTILLA_FEATURE_FLAGS", "a,,b", "must be a comma-separated list of flag names"],
    ["FLOTILLA_STATUS_PAGE_URL", "status", "must be an http(s) URL"],
    ["FLOTILLA_SUPPORT_FORUM_URL", "forum", "must be an http(s) URL"],
    ["FLOTILLA_FEATURE_REQUESTS_URL", "javascript:alert(1)", "must be an http(s) URL"],
    [
      "FLOTILLA_DOCS_SEARCH_URL",
      "https://docs.example.com/search",
      "must be a URL template with {query}, such as https://docs.example.com/search?q={query}",
    ],
    [
      "FLOTILLA_MAP_TILES",
      "https://tiles.example.com/{z}/{x}.png",
      "must be a tile URL template such as https://tiles.example.com/{z}/{x}/{y}.png, or none",
    ],
    [
      "FLOTILLA_MAP_TILES",
      "ftp://tiles.example.com/{z}/{x}/{y}.png",
      "must be a tile URL template such as https://tiles.example.com/{z}/{x}/{y}.png, or none",
    ],
    [
      "FLOTILLA_MAP_TILES",
      "https://tiles.example.com/{z}/{x}/{y}.png?key={apikey}",
      "must be a tile URL template such as https://tiles.example.com/{z}/{x}/{y}.png, or none",
    ],
    [
      "FLOTILLA_VARIABLE_RESERVED_NAMESPACES",
      "BALENA_,1X",
      "must be a comma-separated list of names (letters, digits, _ and :, starting with a letter) or none",
    ],
    ["REDIS_URL", "localhost:6379", "must be a redis:// or rediss:// URL"],
    ["FLOTILLA_DEVICE_LOG_LINES", "0", "must be a whole number from 1 to 100000"],
    ["FLOTILLA_DEVICE_LOG_LINES", "2.5", "must be a whole number from 1 to 100000"],
    ["FLOTILLA_DEVICE_LOG_HEARTBEAT_SECONDS", "0", "must be a number of seconds from 0.1 to 300"],
    [
      "FLOTILLA_DEVICE_URLS_BASE_DOMAIN",
      "https://devices.example.com",
      "must be a domain name such as devices.example.com",
    ],
    [
      "FLOTILLA_TRUST_PROXY",
      "true",
      "must be a hop count (0-99) or a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.1,192.168.0.0/16)",
    ],
    [
      "FLOTILLA_TRUST_PROXY",
      "10.0.0.1,10.0.0.0/33",
      "must be a hop count (0-99) or a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.1,192.168.0.0/16)",
    ],
    [
      "FLOTILLA_FETCH_ALLOW",
      "git.internal,,10.0.0.0/8",
      "must be a comma-separated list of host names, addresses or CIDRs (e.g. git.internal,10.1.0.0/16)",
    ],
    [
      "FLOTILLA_FETCH_ALLOW",
      "http://git.internal",
      "must be a comma-separated list of host names, addresses or CIDRs (e.g. git.internal,10.1.0.0/16)",
    ],
    [
      "FLOTILLA_DNS_SERVERS",
      "dns.example.com",
      "must be a comma-separated list of DNS server addresses with an optional port (e.g. 1.1.1.1,127.0.0.1:5353,[::1]:53)",
    ],
    [
      "FLOTILLA_DNS_SERVERS",
      "127.0.0.1:99999",
      "must be a comma-separated list of DNS server addresses with an optional port (e.g. 1.1.1.1,127.0.0.1:5353,[::1]:53)",
    ],
    [
      "FLOTILLA_DNS_SERVERS",
      "1.1.1.1,,8.8.8.8",
      "must be a comma-separated list of DNS server addresses with an optional port (e.g. 1.1.1.1,127.0.0.1:5353,[::1]:53)",
    ],
    ["FLOTILLA_WEBHOOK_RETRY_BASE_MS", "50", "must be at least 100 milliseconds"],
    ["FLOTILLA_WEBHOOK_RETRY_BASE_MS", "soon", "must be a number of milliseconds"],
    ["FLOTILLA_AUDIT_RETENTION_DAYS", "0", "must be at least 1 day"],
    ["FLOTILLA_AUDIT_RETENTION_DAYS", "a year", "must be a number of days"],
    ["FLOTILLA_AUDIT_RETENTION_DAYS", "1.5", "must be a whole number of days"],
    ["LOG_FORMAT", "xml", "must be pretty or json"],
    [
      "FLOTILLA_VPN_SUBNET",
      "10.240.0.0",
      "must be an IPv4 network in CIDR notation with a prefix from /16 to /24, such as 10.240.0.0/16",
    ],
    ["FLOTILLA_VPN_SUBNET", "300.1.0.0/16", "each of its four numbers must be 0 to 255"],
    [
      "FLOTILLA_VPN_HOST",
      "https://vpn.example.com",
      "must be a host name or an IPv4 address, without a scheme or port",
    ],
    ["FLOTILLA_SSH_HOST", "git.example.com:22", "must be a host name or an IPv4 address, without a scheme or port"],
  ])("refuses %s=%s with one line naming the variable", (name, value, problem) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(`Invalid ${name}="${value}": ${problem}`);
  });

  it("reads social sign-in providers from FLOTILLA_OIDC_<NAME>_* and FLOTILLA_OAUTH_GITHUB_*", () => {
    expect(loadConfig({}).socialProviders).toEqual([]);
    const config = loadConfig({
      FLOTILLA_OIDC_MY_KEYCLOAK_ISSUER: "https://sso.example.com/realms/main/",
      FLOTILLA_OIDC_MY_KEYCLOAK_CLIENT_ID: "flotilla",
      FLOTILLA_OIDC_MY_KEYCLOAK_CLIENT_SECRET: "s3cret",
      FLOTILLA_OIDC_GOOGLE_ISSUER: "https://accounts.google.com",
      FLOTILLA_OIDC_GOOGLE_CLIENT_ID: "id.apps.googleusercontent.com",
      FLOTILLA_OIDC_GOOGLE_CLIENT_SECRET: "g-secret",
      FLOTILLA_OIDC_GOOGLE_NAME: "Google",
      FLOTILLA_OAUTH_GITHUB_CLIENT_ID: "gh",
      FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET: "gh-secret",
    });
    expect(config.socialProviders).toEqual([
      {
        kind: "oidc",
        slug: "google",
        name: "Google",
        issuer: "https://accounts.google.com",
        clientId: "id.apps.googleusercontent.com",
        clientSecret: "g-secret",
      },
      {
        kind: "oidc",
        slug: "my-keycloak",
        name: "My keycloak",
        issuer: "https://sso.example.com/realms/main",
        clientId: "flotilla",
        clientSecret: "s3cret",
      },
      {
        kind: "github",
        slug: "github",
        name: "GitHub",
        clientId: "gh",
        clientSecret: "gh-secret",
        webUrl: "https://github.com",
        apiUrl: "https://api.github.com",
      },
    ]);
  });

  it.each([
    [
      { FLOTILLA_OIDC_ACME_ISSUER: "https://id.acme.test", FLOTILLA_OIDC_ACME_CLIENT_ID: "x" },
      "Invalid FLOTILLA_OIDC_ACME_CLIENT_SECRET: must be set when FLOTILLA_OIDC_ACME_* is set",
    ],
    [{ FLOTILLA_OIDC_ACME_NAME: "Acme" }, "Invalid FLOTILLA_OIDC_ACME_ISSUER: must be set"],
    [
      {
        FLOTILLA_OIDC_ACME_ISSUER: "id.acme.test",
        FLOTILLA_OIDC_ACME_CLIENT_ID: "x",
        FLOTILLA_OIDC_ACME_CLIENT_SECRET: "y",
      },
      'Invalid FLOTILLA_OIDC_ACME_ISSUER="id.acme.test": must be an http(s) URL',
    ],
    [
      {
        FLOTILLA_OIDC_SAML_ISSUER: "https://x.test",
        FLOTILLA_OIDC_SAML_CLIENT_ID: "x",
        FLOTILLA_OIDC_SAML_CLIENT_SECRET: "y",
      },
      "Invalid FLOTILLA_OIDC_SAML_ISSUER: the provider name SAML is reserved",
    ],
    [{ FLOTILLA_OIDC_ACME_ISSUR: "https://x.test" }, "Invalid FLOTILLA_OIDC_ACME_ISSUR: not a provider setting"],
    [
      { FLOTILLA_OAUTH_GITHUB_CLIENT_ID: "gh" },
      "Invalid FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET: FLOTILLA_OAUTH_GITHUB_CLIENT_ID and FLOTILLA_OAUTH_GITHUB_CLIENT_SECRET are set together",
    ],
    [
      { FLOTILLA_SUPPORT_PORTAL_URL: "https://help.example.com/access/jwt" },
      "Invalid FLOTILLA_SUPPORT_PORTAL_SECRET: FLOTILLA_SUPPORT_PORTAL_URL and FLOTILLA_SUPPORT_PORTAL_SECRET are set together",
    ],
    [{ FLOTILLA_CHAT_SECRET: "short" }, 'Invalid FLOTILLA_CHAT_SECRET="short": must be at least 16 characters'],
  ])("refuses a half-configured sign-in or handoff setting: %j", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("reads the support portal and chat secrets", () => {
    const config = loadConfig({
      FLOTILLA_SUPPORT_PORTAL_URL: "https://help.example.com/access/jwt",
      FLOTILLA_SUPPORT_PORTAL_SECRET: "0123456789abcdef",
      FLOTILLA_CHAT_SECRET: "fedcba9876543210",
    });
    expect(config.supportPortal).toEqual({ url: "https://help.example.com/access/jwt", secret: "0123456789abcdef" });
    expect(config.chatSecret).toBe("fedcba9876543210");
    expect(loadConfig({}).supportPortal).toBeUndefined();
  });

  it("reads Zendesk only when its URL, email and API token are all set", () => {
    const all = {
      ZENDESK_URL: "https://acme.zendesk.com/",
      ZENDESK_EMAIL: "agent@acme.test",
      ZENDESK_API_TOKEN: "zd-token-123",
    };
    expect(loadConfig(all).zendesk).toEqual({
      url: "https://acme.zendesk.com",
      email: "agent@acme.test",
      apiToken: "zd-token-123",
    });
    expect(loadConfig({}).zendesk).toBeUndefined();
    const { ZENDESK_EMAIL: _email, ...withoutEmail } = all;
    expect(() => loadConfig(withoutEmail)).toThrow(ConfigError);
    expect(() => loadConfig(withoutEmail)).toThrow(
      "Invalid ZENDESK_EMAIL: ZENDESK_URL, ZENDESK_EMAIL and ZENDESK_API_TOKEN are set together",
    );
    expect(() => loadConfig({ ZENDESK_API_TOKEN: "zd-token-123" })).toThrow("Invalid ZENDESK_URL:");
    expect(() => loadConfig({ ...all, ZENDESK_URL: "ftp://x" })).toThrow('Invalid ZENDESK_URL="ftp://x"');
  });

  it("reads the support ticket's custom fields from FLOTILLA_SUPPORT_TICKET_FIELDS, and refuses a bad file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-fields-"));
    const file = path.join(dir, "fields.json");
    try {
      fs.writeFileSync(
        file,
        JSON.stringify([
          { id: 360001, type: "text", title_in_portal: "Device UUID" },
          {
            id: 360002,
            type: "tagger",
            title_in_portal: "Product",
            required_in_portal: true,
            options: [{ name: "Cloud", value: "cloud" }],
          },
        ]),
      );
      const fields = loadConfig({ FLOTILLA_SUPPORT_TICKET_FIELDS: file }).supportTicketFields;
      expect(fields?.map((field) => [field.id, field.required_in_portal])).toEqual([
        [360001, false],
        [360002, true],
      ]);
      expect(loadConfig({}).supportTicketFields).toBeUndefined();
      fs.writeFileSync(file, JSON.stringify([{ id: 300, type: "tagger", title_in_portal: "No options" }]));
      expect(() => loadConfig({ FLOTILLA_SUPPORT_TICKET_FIELDS: file })).toThrow(
        "a tagger field needs options, other fields have none",
      );
      fs.writeFileSync(file, JSON.stringify([{ id: 3, type: "text", title_in_portal: "Clash" }]));
      expect(() => loadConfig({ FLOTILLA_SUPPORT_TICKET_FIELDS: file })).toThrow("lower ids are the form's own fields");
      fs.writeFileSync(file, "not json");
      expect(() => loadConfig({ FLOTILLA_SUPPORT_TICKET_FIELDS: file })).toThrow(ConfigError);
      expect(() => loadConfig({ FLOTILLA_SUPPORT_TICKET_FIELDS: path.join(dir, "missing.json") })).toThrow(
        "not a readable JSON file",
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads the CA devices must trust from FLOTILLA_DEVICE_CA, and refuses a missing file, no certificate or a key", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-ca-"));
    const file = path.join(dir, "ca.pem");
    const pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUXq0=\n-----END CERTIFICATE-----\n";
    try {
      expect(loadConfig({}).deviceCa).toBeUndefined();
      fs.writeFileSync(file, pem);
      expect(loadConfig({ FLOTILLA_DEVICE_CA: file }).deviceCa).toBe(pem);
      expect(() => loadConfig({ FLOTILLA_DEVICE_CA: path.join(dir, "missing.pem") })).toThrow(
        /Invalid FLOTILLA_DEVICE_CA=.*not a readable file/,
      );
      fs.writeFileSync(file, "not a certificate");
      expect(() => loadConfig({ FLOTILLA_DEVICE_CA: file })).toThrow("must be a PEM file of CA certificates");
      fs.writeFileSync(file, `${pem}-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n`);
      expect(() => loadConfig({ FLOTILLA_DEVICE_CA: file })).toThrow(ConfigError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads FLOTILLA_OS_IMAGES_DIR as a readable directory, and needs mtools' mcopy for it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flotilla-images-"));
    try {
      expect(loadConfig({}).osImagesDir).toBeUndefined();
      expect(loadConfig({ FLOTILLA_OS_IMAGES_DIR: dir }).osImagesDir).toBe(dir);
      expect(() => loadConfig({ FLOTILLA_OS_IMAGES_DIR: path.join(dir, "missing") })).toThrow(
        /Invalid FLOTILLA_OS_IMAGES_DIR=.*not a readable directory/,
      );
      fs.writeFileSync(path.join(dir, "file.img"), "");
      expect(() => loadConfig({ FLOTILLA_OS_IMAGES_DIR: path.join(dir, "file.img") })).toThrow(
        "not a readable directory (not a directory)",
      );
      expect(() => loadConfig({ FLOTILLA_OS_IMAGES_DIR: dir, PATH: path.join(dir, "no-tools") })).toThrow(
        "configuring images needs mtools' mcopy on the PATH (Debian: apt-get install mtools)",
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("trusts no forwarded header unless FLOTILLA_TRUST_PROXY names the proxies or a hop count", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ FLOTILLA_TRUST_PROXY: "0" }).trustProxy).toBe(false);
    expect(loadConfig({ FLOTILLA_TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(loadConfig({ FLOTILLA_TRUST_PROXY: "10.0.0.1, 172.16.0.0/12,::1,fd00::/8" }).trustProxy).toEqual([
      "10.0.0.1",
      "172.16.0.0/12",
      "::1",
      "fd00::/8",
    ]);
  });

  it("reads FLOTILLA_FETCH_ALLOW as host names, addresses and CIDRs", () => {
    expect(loadConfig({}).fetchAllow).toEqual([]);
    expect(loadConfig({ FLOTILLA_FETCH_ALLOW: "Git.Internal,10.1.0.0/16,127.0.0.2" }).fetchAllow).toEqual([
      "git.internal",
      "10.1.0.0/16",
      "127.0.0.2",
    ]);
  });

  it("reads FLOTILLA_DNS_SERVERS as addresses with optional ports; unset is the system's resolvers", () => {
    expect(loadConfig({}).dnsServers).toBeUndefined();
    expect(loadConfig({ FLOTILLA_DNS_SERVERS: "1.1.1.1, 127.0.0.1:5353,2606:4700::1111,[::1]:53" }).dnsServers).toEqual(
      ["1.1.1.1", "127.0.0.1:5353", "2606:4700::1111", "[::1]:53"],
    );
  });

  it("takes the device map's tiles from FLOTILLA_MAP_TILES: OpenStreetMap by default, none for no tiles", () => {
    expect(loadConfig({}).mapTiles).toBe("https://tile.openstreetmap.org/{z}/{x}/{y}.png");
    expect(loadConfig({ FLOTILLA_MAP_TILES: "none" }).mapTiles).toBeUndefined();
    expect(loadConfig({ FLOTILLA_MAP_TILES: "http://10.0.0.5:8080/{z}/{x}/{y}.png" }).mapTiles).toBe(
      "http://10.0.0.5:8080/{z}/{x}/{y}.png",
    );
    expect(loadConfig({ FLOTILLA_MAP_TILES: "https://{s}.tiles.example.com/{z}/{x}/{y}{r}.png" }).mapTiles).toBe(
      "https://{s}.tiles.example.com/{z}/{x}/{y}{r}.png",
    );
    expect(mapTilesSource("http://10.0.0.5:8080/{z}/{x}/{y}.png")).toBe("http://10.0.0.5:8080");
    expect(mapTilesSource("https://{s}.tiles.example.com/{z}/{x}/{y}.png")).toBe("https://*.tiles.example.com");
  });

  it("sends mail from SMTP_FROM, or from no-reply at the dashboard's host", () => {
    expect(loadConfig({ FLOTILLA_PUBLIC_URL: "https://console.example.com/" }).mailFrom).toBe(
      "Flotilla <no-reply@console.example.com>",
    );
    expect(loadConfig({ SMTP_FROM: "Fleet <ops@example.org>" }).mailFrom).toBe("Fleet <ops@example.org>");
    expect(loadConfig({ SMTP_FROM: "ops@example.org" }).mailFrom).toBe("ops@example.org");
  });

  it("needs the admin email and password together", () => {
    expect(() => loadConfig({ FLOTILLA_ADMIN_EMAIL: "a@example.com" })).toThrow("FLOTILLA_ADMIN_PASSWORD");
    expect(loadConfig({ FLOTILLA_ADMIN_EMAIL: "a@example.com", FLOTILLA_ADMIN_PASSWORD: "long-enough" }).admin).toEqual(
      {
        email: "a@example.com",
        password: "long-enough",
      },
    );
  });

  it("needs the reCAPTCHA keys when FLOTILLA_CAPTCHA=recaptcha", () => {
    expect(() => loadConfig({ FLOTILLA_CAPTCHA: "recaptcha" })).toThrow(
      'Invalid FLOTILLA_CAPTCHA="recaptcha": needs RECAPTCHA_SITE_KEY and RECAPTCHA_SECRET_KEY',
    );
  });

  it("serves device public URLs under devices.localhost and runs without Redis by default", () => {
    const config = loadConfig({});
    expect(config.deviceUrlsBaseDomain).toBe("devices.localhost");
    expect(config.redisUrl).toBeUndefined();
    expect(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379" }).redisUrl).toBe("redis://127.0.0.1:6379");
  });

  it("reads the variable name rules, with the domain's defaults and none as an empty list", () => {
    expect(loadConfig({}).variableRules.reservedNamespaces).toEqual(["RESIN_", "BALENA_"]);
    const rules = loadConfig({
      FLOTILLA_VARIABLE_RESERVED_NAMESPACES: "none",
      FLOTILLA_VARIABLE_WHITELISTED_NAMES: "LEGACY_A,LEGACY_B",
    }).variableRules;
    expect(rules.reservedNamespaces).toEqual([]);
    expect(rules.whiteListedNames).toEqual(["LEGACY_A", "LEGACY_B"]);
    expect(rules.reservedNames).toContain("BALENA");
  });

  it("reads the registry address as host[:port] (HTTPS) or an http(s) URL, and no registry when unset", () => {
    expect(loadConfig({}).registry).toBeUndefined();
    expect(loadConfig({ FLOTILLA_REGISTRY_URL: "127.0.0.1:5055" }).registry).toMatchObject({
      url: "https://127.0.0.1:5055",
      host: "127.0.0.1:5055",
      keyFile: undefined,
    });
    expect(loadConfig({ FLOTILLA_REGISTRY_URL: "http://registry.local:5000/" }).registry).toMatchObject({
      url: "http://registry.local:5000",
      host: "registry.local:5000",
    });
    expect(loadConfig({ FLOTILLA_REGISTRY_URL: "https://registry.example.com" }).registry?.host).toBe(
      "registry.example.com",
    );
    const error = /^Invalid FLOTILLA_REGISTRY_URL=.*: must be host\[:port\] or an http\(s\) URL without a path/;
    for (const bad of ["ftp://r.example.com", "https://r.example.com/v2", "r.example.com/path", "user:pw@r", "a b"]) {
      expect(() => loadConfig({ FLOTILLA_REGISTRY_URL: bad })).toThrow(error);
    }
    expect(() => loadConfig({ FLOTILLA_REGISTRY_URL: "r.example.com", FLOTILLA_REGISTRY_KEY: "k.pem" })).toThrow(
      "Invalid FLOTILLA_REGISTRY_CERT: FLOTILLA_REGISTRY_KEY and FLOTILLA_REGISTRY_CERT are set together",
    );
    expect(() => loadConfig({ FLOTILLA_REGISTRY_KEY: "k.pem", FLOTILLA_REGISTRY_CERT: "c.pem" })).toThrow(
      "Invalid FLOTILLA_REGISTRY_URL: must be set when FLOTILLA_REGISTRY_KEY is set",
    );
  });

  it("reads the image builder as a Docker Engine API address; it needs a registry, and mirroring needs it", () => {
    const registry = { FLOTILLA_REGISTRY_URL: "127.0.0.1:5055" };
    expect(loadConfig(registry).builder).toBeUndefined();
    expect(loadConfig({ ...registry, FLOTILLA_BUILDER: "unix:///run/podman/podman.sock" }).builder).toEqual({
      engine: { socketPath: "/run/podman/podman.sock" },
      mirror: false,
    });
    expect(loadConfig({ ...registry, FLOTILLA_BUILDER: "/var/run/docker.sock" }).builder?.engine).toEqual({
      socketPath: "/var/run/docker.sock",
    });
    expect(
      loadConfig({ ...registry, FLOTILLA_BUILDER: "tcp://10.0.0.5:2375", FLOTILLA_REGISTRY_MIRROR: "1" }).builder,
    ).toEqual({ engine: { url: "http://10.0.0.5:2375" }, mirror: true });
    for (const bad of ["podman.sock", "unix://relative.sock", "ftp://host:21", "tcp://host:2375/v1.41"]) {
      expect(() => loadConfig({ ...registry, FLOTILLA_BUILDER: bad })).toThrow(
        /^Invalid FLOTILLA_BUILDER=.*: must be a Docker Engine API address/,
      );
    }
    expect(() => loadConfig({ FLOTILLA_BUILDER: "/run/podman.sock" })).toThrow(
      "Invalid FLOTILLA_REGISTRY_URL: must be set when FLOTILLA_BUILDER is set (built images go there)",
    );
    expect(() => loadConfig({ ...registry, FLOTILLA_REGISTRY_MIRROR: "1" })).toThrow(
      "Invalid FLOTILLA_BUILDER: must be set when FLOTILLA_REGISTRY_MIRROR=1 (it copies the images)",
    );
  });

  it("reads Stripe's keys (the payment provider), and checks their form", () => {
    expect(loadConfig({}).stripe).toBeUndefined();
    expect(
      loadConfig({
        STRIPE_SECRET_KEY: "sk_test_abc123",
        STRIPE_PUBLISHABLE_KEY: "pk_test_abc123",
        STRIPE_WEBHOOK_SECRET: "whsec_xyz",
        STRIPE_API_URL: "http://localhost:12111",
      }).stripe,
    ).toEqual({
      secretKey: "sk_test_abc123",
      publishableKey: "pk_test_abc123",
      webhookSecret: "whsec_xyz",
      apiUrl: "http://localhost:12111",
    });
    expect(() => loadConfig({ STRIPE_SECRET_KEY: "sk_test_abc123" })).toThrow(
      "Invalid STRIPE_PUBLISHABLE_KEY: Missing billing provider configuration parameters",
    );
    expect(() => loadConfig({ STRIPE_PUBLISHABLE_KEY: "pk_test_abc123" })).toThrow(
      "Invalid STRIPE_SECRET_KEY: Missing billing provider configuration parameters",
    );
    expect(() => loadConfig({ STRIPE_SECRET_KEY: "pk_test_abc" })).toThrow(
      /^Invalid STRIPE_SECRET_KEY=.*: must be a Stripe secret key/,
    );
    expect(() => loadConfig({ STRIPE_WEBHOOK_SECRET: "secret" })).toThrow(
      /^Invalid STRIPE_WEBHOOK_SECRET=.*: must be a Stripe webhook signing secret/,
    );
    expect(() => loadConfig({ STRIPE_WEBHOOK_SECRET: "whsec_xyz" })).toThrow(
      "Invalid STRIPE_SECRET_KEY: Missing billing provider configuration parameters",
    );
  });

  it("reads where Contact sales leads, the platform administrator's address by default", () => {
    expect(loadConfig({}).salesUrl).toBeUndefined();
    expect(
      loadConfig({ FLOTILLA_ADMIN_EMAIL: "ops@example.com", FLOTILLA_ADMIN_PASSWORD: "long-enough-password" }).salesUrl,
    ).toBe("mailto:ops@example.com");
    expect(loadConfig({ FLOTILLA_SALES_URL: "https://example.com/sales" }).salesUrl).toBe("https://example.com/sales");
    expect(() => loadConfig({ FLOTILLA_SALES_URL: "javascript:alert(1)" })).toThrow(
      /^Invalid FLOTILLA_SALES_URL=.*: must be an http\(s\) URL or a mailto: address/,
    );
  });

  it("reads the support drawer's links, balena's forums by default, and the docs search template", () => {
    const defaults = loadConfig({});
    expect(defaults.supportForumUrl).toBe("https://forums.balena.io/");
    expect(defaults.featureRequestsUrl).toBe("https://forums.balena.io/c/product-support/feature-requests/");
    expect(defaults.docsSearchUrl).toBeUndefined();
    const set = loadConfig({
      FLOTILLA_SUPPORT_FORUM_URL: "https://forum.example.com/",
      FLOTILLA_FEATURE_REQUESTS_URL: "https://ideas.example.com/",
      FLOTILLA_DOCS_SEARCH_URL: "https://docs.example.com/search?q={query}",
    });
    expect([set.supportForumUrl, set.featureRequestsUrl, set.docsSearchUrl]).toEqual([
      "https://forum.example.com/",
      "https://ideas.example.com/",
      "https://docs.example.com/search?q={query}",
    ]);
  });

  it("runs the SSH gateway only when FLOTILLA_SSH_PORT is set", () => {
    expect(loadConfig({}).sshPort).toBeUndefined();
    expect(loadConfig({ FLOTILLA_SSH_PORT: "2222" }).sshPort).toBe(2222);
  });

  it("reads the seller on invoices from FLOTILLA_BILLING_ISSUER_*, naming a bad variable", () => {
    expect(loadConfig({}).billingIssuer).toEqual({ name: "Flotilla", address: [] });
    expect(
      loadConfig({
        FLOTILLA_BILLING_ISSUER_NAME: "Fleetworks GmbH",
        FLOTILLA_BILLING_ISSUER_ADDRESS: "Torstraße 1|10119 Berlin",
        FLOTILLA_BILLING_ISSUER_COUNTRY: "de",
        FLOTILLA_BILLING_ISSUER_TAX_RATE: "19",
      }).billingIssuer,
    ).toEqual({
      name: "Fleetworks GmbH",
      address: ["Torstraße 1", "10119 Berlin"],
      country: "DE",
      tax_rate_percent: 19,
    });
    expect(() => loadConfig({ FLOTILLA_BILLING_ISSUER_COUNTRY: "Germany" })).toThrow(
      "Invalid FLOTILLA_BILLING_ISSUER_COUNTRY: must be a two-letter country code (ISO 3166-1)",
    );
    expect(() => loadConfig({ FLOTILLA_BILLING_ISSUER_TAX_RATE: "lots" })).toThrow(
      "Invalid FLOTILLA_BILLING_ISSUER_TAX_RATE: must be a number",
    );
    expect(() => loadConfig({ FLOTILLA_BILLING_ISSUER_LOGO: "/nowhere/logo.png" })).toThrow(
      "Invalid FLOTILLA_BILLING_ISSUER_LOGO: is not a readable file",
    );
    expect(() => loadConfig({ FLOTILLA_BILLING_ISSUER_FILE: "/nowhere/issuer.json" })).toThrow(
      /^Invalid FLOTILLA_BILLING_ISSUER_FILE="\/nowhere\/issuer.json": not a readable JSON file/,
    );
  });

  it("treats an empty variable as unset", () => {
    expect(loadConfig({ FLOTILLA_API_PORT: "" }).apiPort).toBe(8081);
  });
});
