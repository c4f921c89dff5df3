import { TWO_FACTOR_CODE_LENGTH } from "@flotilla/domain";
import { setDocumentTitle } from "../../components/document-title.ts";
import { renderAuthFrame } from "../../components/plain-auth-frame.ts";
import { button, buttonLink, divider, errorAlert, link, passwordField, textField } from "../../components/plain-ui.ts";
import { h } from "../../lib/dom.ts";
import { t } from "../../lib/i18n.ts";
import { hasErrors } from "../../lib/validation.ts";
import { samlErrorText } from "../identity/saml-errors.ts";
import { type LoginSearch, logIn, pageAfterLogin, redirectQuery } from "./login.ts";
import { isLoginLocked, loginErrorText } from "./login-lock.ts";
import { fetchSocialProviders, type SocialProvider, socialErrorText, startSocialSignIn } from "./social.ts";
import "./login-page.css";

/**
 * Sign-in (spec 1 §2.3), as plain elements: it renders before React, MUI and the router load
 * (main.tsx opens it for a cold load of /login; the router's /login route mounts the same page).
 * Username (or email) and password; the header says the first 10 devices are free. A token that
 * still needs its second factor continues at /login/two-factor. A login locked by failed logins
 * (429) shows the server's whole text (how long the lock lasts) and offers its two ways through:
 * a two-factor code sent along with the password, or a password reset (security review 3).
 */
export interface LoginPageOptions {
  apiUrl: string;
  search: LoginSearch;
  /** Called once the person starts on the form (fetches what comes after it). */
  warmUp?: () => void;
}

/** The form's rules are fetched once the person types or clicks on the form: they bring zod. */
const loadLoginRules = () => import("./login-rules.ts");

/** Renders the page into `host`; the function returned takes it away. */
export function renderLoginPage(host: HTMLElement, options: LoginPageOptions): () => void {
  const { search } = options;
  let providers: SocialProvider[] = [];
  let loginError: string | undefined;
  let locked = false;
  let busy = false;
  let removed = false;

  const username = textField({
    label: t("login.email"),
    name: "username",
    autocomplete: "username",
    required: true,
  });
  const password = passwordField({
    label: t("login.password"),
    name: "password",
    autocomplete: "current-password",
    showLabel: t("login.show_password"),
    hideLabel: t("login.hide_password"),
  });
  const twoFactorCode = textField({
    label: t("login.locked_code"),
    name: "twoFactorCode",
    autocomplete: "one-time-code",
    helper: t("login.locked_code_help"),
    input: { inputmode: "numeric", maxlength: TWO_FACTOR_CODE_LENGTH },
  });
  twoFactorCode.input.addEventListener("input", () => {
    const bare = twoFactorCode.input.value.replace(/\s/g, "");
    if (bare !== twoFactorCode.input.value) twoFactorCode.input.value = bare;
  });
  const lockedPart = h(
    "div",
    { class: "fl-login-locked", hidden: true },
    h(
      "p",
      { class: "fl-login-locked-text" },
      t("login.locked_text"),
      " ",
      link("/password-reset", t("login.locked_reset")),
    ),
    twoFactorCode.root,
  );
  const alerts = h("div", { class: "fl-login-alerts" });
  const submit = button({ variant: "contained", size: "large", full: true }, { type: "submit" }, t("login.submit"));
  const socialButtons = h("div", { class: "fl-login-social", "data-testid": "social-buttons", hidden: true });

  /** The alerts above the fields: a failed login's text, else what the query brought back. */
  const showAlerts = () => {
    const texts: string[] = [];
    if (loginError !== undefined) texts.push(loginError);
    else {
      if (search.saml_error) texts.push(samlErrorText(search.saml_error, { domain: search.domain }));
      if (search.social_error) {
        // Named with the provider's name once the providers are known.
        const provider = search.provider ?? "";
        const name = providers.find((p) => p.slug === provider)?.name ?? provider;
        texts.push(socialErrorText(search.social_error, name));
      }
    }
    alerts.replaceChildren(...texts.map(errorAlert));
    alerts.hidden = texts.length === 0;
  };

  const setBusy = (value: boolean) => {
    busy = value;
    submit.disabled = value;
    submit.setAttribute("aria-busy", String(value));
  };

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    const { loginErrors } = await loadLoginRules();
    const found = loginErrors({ username: username.input.value, password: password.input.value });
    username.setError(found.username);
    password.setError(found.password);
    if (hasErrors(found)) return;
    const code = locked ? twoFactorCode.input.value.trim() : "";
    loginError = undefined;
    showAlerts();
    setBusy(true);
    try {
      const claims = await logIn(options.apiUrl, {
        username: username.input.value.trim(),
        password: password.input.value,
        ...(code ? { twoFactorCode: code } : {}),
      });
      // A document navigation, which starts the full app; the button stays busy until it does.
      if (!removed) window.location.assign(pageAfterLogin(claims, search.redirect));
    } catch (error) {
      if (removed) return;
      if (isLoginLocked(error)) {
        locked = true;
        lockedPart.hidden = false;
      }
      loginError = loginErrorText(error);
      showAlerts();
      setBusy(false);
    }
  };

  let warmedUp = false;
  const warmUp = () => {
    if (warmedUp) return;
    warmedUp = true;
    void loadLoginRules().catch(() => undefined);
    options.warmUp?.();
  };

  const form = h(
    "form",
    {
      class: "fl-login-form",
      novalidate: true,
      onsubmit: (event) => void onSubmit(event),
      oninput: warmUp,
      onpointerdown: warmUp,
    },
    alerts,
    username.root,
    password.root,
    lockedPart,
    h("div", { class: "fl-login-forgot" }, link("/password-reset", t("login.forgot_password"))),
    submit,
    divider(t("login.or")),
    // Social providers (spec 1 §2.3): one button each, none when none is configured.
    socialButtons,
    // Enterprise single sign-on (spec 1 §2.3): the SSO identifier is asked on /saml.
    buttonLink({ variant: "outlined", size: "large", full: true }, "/saml", t("login.sso")),
  );
  showAlerts();

  const frame = renderAuthFrame();
  setDocumentTitle(t("login.page_title"));
  frame.title.textContent = t("login.title");
  frame.subtitle.textContent = t("login.free_devices");
  frame.body.append(form);
  frame.footer.append(t("login.no_account"), " ", link(`/signup${redirectQuery(search.redirect)}`, t("login.sign_up")));
  host.replaceChildren(frame.frame);
  username.input.focus();

  void fetchSocialProviders(options.apiUrl).then((list) => {
    if (removed) return;
    providers = list;
    socialButtons.replaceChildren(
      ...list.map((provider) =>
        button(
          { variant: "outlined", size: "large", full: true },
          { onclick: () => startSocialSignIn(options.apiUrl, provider.slug, search.redirect) },
          t("login.social", { provider: provider.name }),
        ),
      ),
    );
    socialButtons.hidden = list.length === 0;
    if (search.social_error) showAlerts();
  });

  return () => {
    removed = true;
    frame.frame.remove();
  };
}
