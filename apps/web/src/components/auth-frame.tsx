import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";
import { type ReactNode, useLayoutEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { usePreference } from "../lib/use-preference.ts";
import { type AuthFrameParts, renderAuthFrame } from "./plain-auth-frame.ts";
import { useDocumentTitle } from "./use-document-title.ts";

/**
 * The frame of the signed-out pages (login, sign-up, two-factor, password reset): the plain one
 * (plain-auth-frame.ts), which the login page renders before React loads, with this page's
 * parts put into it.
 */
export function AuthFrame(props: {
  pageTitle: string;
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}) {
  useDocumentTitle(props.pageTitle);
  const [colorMode] = usePreference("colorMode");
  const host = useRef<HTMLDivElement>(null);
  const [parts, setParts] = useState<AuthFrameParts>();
  // Before paint: the page's parts are rendered into the frame in the same commit.
  useLayoutEffect(() => {
    const element = host.current;
    if (!element) return;
    const rendered = renderAuthFrame();
    element.replaceChildren(rendered.frame);
    setParts(rendered);
    return () => element.replaceChildren();
  }, []);
  return (
    <div ref={host} className="fl-ui fl-auth-host" data-color-mode={colorMode}>
      {parts ? (
        <>
          {createPortal(props.title, parts.title)}
          {props.subtitle ? createPortal(props.subtitle, parts.subtitle) : null}
          {createPortal(props.children, parts.body)}
          {props.footer ? createPortal(props.footer, parts.footer) : null}
        </>
      ) : null}
    </div>
  );
}

/** A centred card for the signed-in pages without the side menu (verify email, profile completion). */
export function FocusCard(props: { pageTitle: string; title: string; icon?: ReactNode; children: ReactNode }) {
  useDocumentTitle(props.pageTitle);
  return (
    <Box sx={{ display: "flex", justifyContent: "center", px: 2, py: { xs: 4, md: 8 } }}>
      <Box
        sx={{
          width: "100%",
          maxWidth: 520,
          bgcolor: "background.paper",
          border: 1,
          borderColor: "divider",
          borderRadius: 2,
          p: { xs: 3, sm: 4 },
        }}
      >
        {props.icon ? (
          <Box
            aria-hidden
            sx={{
              width: 48,
              height: 48,
              borderRadius: "50%",
              display: "grid",
              placeItems: "center",
              bgcolor: "action.hover",
              color: "primary.main",
              mb: 2,
            }}
          >
            {props.icon}
          </Box>
        ) : null}
        <Typography variant="h5" component="h1" sx={{ mb: 1 }}>
          {props.title}
        </Typography>
        {props.children}
      </Box>
    </Box>
  );
}
