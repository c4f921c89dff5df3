import ArrowBack from "@mui/icons-material/ArrowBack";
import Close from "@mui/icons-material/Close";
import OpenInNew from "@mui/icons-material/OpenInNew";
import Search from "@mui/icons-material/Search";
import Box from "@mui/material/Box";
import Divider from "@mui/material/Divider";
import Drawer from "@mui/material/Drawer";
import IconButton from "@mui/material/IconButton";
import InputAdornment from "@mui/material/InputAdornment";
import Link from "@mui/material/Link";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { type FormEvent, type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ServiceStatusIndicator } from "../../components/service-status.tsx";
import { Section } from "./drawer-section.tsx";
import { supportDrawer, useSupportDrawer } from "./drawer-state.ts";
import { docsSearchHref } from "./model.ts";
import { PrivateSupport } from "./private-support.tsx";
import { TicketForm } from "./ticket-form.tsx";
import { DrawerTicket } from "./ticket-thread.tsx";

/** The drawer's width (spec 3 §2 Support drawer). */
export const SUPPORT_DRAWER_WIDTH = 310;

/**
 * The outside documentation the header's help menu linked to (spec 1 §2.5): devices run balenaOS
 * and the command-line tool is balena-cli, so balena's public documentation, help and hub.
 */
export const RESOURCE_LINKS = [
  { key: "getting_started", href: "https://docs.balena.io/learn/getting-started/raspberrypi4-64/nodejs/" },
  { key: "docs", href: "https://docs.balena.io/" },
  { key: "help", href: "https://forums.balena.io/c/product-support/" },
  { key: "hub", href: "https://hub.balena.io/" },
] as const;

const external = { target: "_blank", rel: "noopener noreferrer" } as const;

/**
 * The support drawer (spec 3 §2): on the right, 310 px wide, with the status page indicator, the
 * docs search, private support (the ticket form and the user's tickets), the community forum and
 * feature requests, and the outside documentation.
 */
export function SupportDrawer() {
  const { t } = useTranslation();
  const { open, view } = useSupportDrawer();
  const title =
    view.name === "create"
      ? t("support.form.title")
      : view.name === "ticket"
        ? t("support.thread.title", { id: view.id })
        : t("support.drawer_title");
  return (
    <Drawer
      anchor="right"
      open={open}
      onClose={supportDrawer.close}
      slotProps={{
        paper: {
          role: "dialog",
          "aria-label": t("support.drawer_title"),
          sx: { width: SUPPORT_DRAWER_WIDTH, maxWidth: "100vw", display: "flex", flexDirection: "column" },
        },
      }}
    >
      <Box
        sx={{
          display: "flex",
          alignItems: "center",
          gap: 0.5,
          px: 1,
          minHeight: 52,
          borderBottom: 1,
          borderColor: "divider",
          flexShrink: 0,
        }}
      >
        {view.name !== "home" ? (
          <IconButton size="small" aria-label={t("support.back")} onClick={() => supportDrawer.show({ name: "home" })}>
            <ArrowBack fontSize="small" />
          </IconButton>
        ) : null}
        <Typography component="h2" sx={{ flex: 1, fontWeight: 600, fontSize: 16, pl: view.name === "home" ? 1 : 0 }}>
          {title}
        </Typography>
        <IconButton size="small" aria-label={t("support.close")} onClick={supportDrawer.close}>
          <Close fontSize="small" />
        </IconButton>
      </Box>
      <Box sx={{ flex: 1, overflowY: "auto", px: 2, py: 2 }}>
        {view.name === "create" ? <TicketForm /> : null}
        {view.name === "ticket" ? <DrawerTicket id={view.id} /> : null}
        {view.name === "home" ? <DrawerHome /> : null}
      </Box>
    </Drawer>
  );
}

function ExternalLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <Link
      href={href}
      {...external}
      underline="hover"
      sx={{ display: "flex", alignItems: "center", justifyContent: "space-between", py: 0.5, fontSize: 14 }}
    >
      {children}
      <OpenInNew aria-hidden sx={{ fontSize: 16, color: "text.secondary" }} />
    </Link>
  );
}

function DocsSearch({ template }: { template: string }) {
  const { t } = useTranslation();
  const [query, setQuery] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const href = docsSearchHref(template, query);
    if (href) window.open(href, "_blank", "noopener,noreferrer");
  };
  return (
    <Box component="form" role="search" onSubmit={submit} sx={{ mb: 2.5 }}>
      <TextField
        size="small"
        fullWidth
        label={t("support.docs_search")}
        value={query}
        onChange={(event) => setQuery(event.target.value)}
        slotProps={{
          input: {
            endAdornment: (
              <InputAdornment position="end">
                <IconButton type="submit" edge="end" size="small" aria-label={t("support.docs_search_submit")}>
                  <Search fontSize="small" />
                </IconButton>
              </InputAdornment>
            ),
          },
        }}
      />
    </Box>
  );
}

function DrawerHome() {
  const { t } = useTranslation();
  const { config } = useServices();
  return (
    <>
      {config.docsSearchUrl ? <DocsSearch template={config.docsSearchUrl} /> : null}
      {config.statusPageUrl ? (
        <Section title={t("support.status")}>
          <ServiceStatusIndicator />
        </Section>
      ) : null}
      <PrivateSupport />
      <Divider sx={{ mb: 2 }} />
      <Section title={t("support.community")}>
        <ExternalLink href={config.supportForumUrl}>{t("support.forum")}</ExternalLink>
        <ExternalLink href={config.featureRequestsUrl}>{t("support.feature_requests")}</ExternalLink>
      </Section>
      <Section title={t("support.resources")}>
        {RESOURCE_LINKS.map((link) => (
          <ExternalLink key={link.key} href={link.href}>
            {t(`help_menu.${link.key}`)}
          </ExternalLink>
        ))}
      </Section>
    </>
  );
}
