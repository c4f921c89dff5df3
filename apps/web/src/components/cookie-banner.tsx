import { useLayoutEffect, useRef } from "react";
import { usePreference } from "../lib/use-preference.ts";
import { renderCookieBanner } from "./plain-cookie-banner.ts";

/** The app's cookie banner: the plain one (plain-cookie-banner.ts), shown until it is answered. */
export function CookieBanner() {
  const [consent] = usePreference("cookieConsent");
  const [colorMode] = usePreference("colorMode");
  const host = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const element = host.current;
    if (!element || consent) return;
    element.replaceChildren(renderCookieBanner());
    return () => element.replaceChildren();
  }, [consent]);
  if (consent) return null;
  return <div ref={host} className="fl-ui fl-cookie-banner-host" data-color-mode={colorMode} />;
}
