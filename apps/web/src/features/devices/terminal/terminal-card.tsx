import { TERMINAL_HOST_TARGET } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import CloseOutlined from "@mui/icons-material/CloseOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import IconButton from "@mui/material/IconButton";
import ListItemText from "@mui/material/ListItemText";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../../app-services.tsx";
import { Card } from "../../orgs/ui.tsx";
import type { Device } from "../data.ts";
import { useServiceRows } from "../services-card.tsx";
import type { TerminalStatus } from "./connection.ts";
import { TerminalView } from "./terminal-view.tsx";

type Tab = { id: number; target: string; label: string; status: TerminalStatus; reconnect: number };

/** Whether the caller may open a Host OS terminal here: GET {api}/access/v1/hostos/{uuid} (spec 2 §7). */
function useHostOsAccess(uuid: string, enabled: boolean) {
  const { config, sdk } = useServices();
  return useQuery({
    queryKey: ["device", uuid, "hostos-access"],
    enabled,
    staleTime: 60_000,
    queryFn: async (): Promise<{ allowed: boolean; code: string | null }> => {
      const token = await sdk.auth.getToken();
      const response = await fetch(`${config.apiUrl}/access/v1/hostos/${encodeURIComponent(uuid)}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      return { allowed: response.ok, code: response.headers.get("x-flotilla-error-code") };
    },
  });
}

const STATE_COLOUR = { connecting: "info", connected: "success", failed: "error" } as const;

/**
 * The web terminal card of a device's summary page (spec 2 §2 "Web terminal: tabs, sessions, and
 * a target selector (Host OS or a service)"): each tab is one session to the Host OS or a running
 * service, with its state (connecting, connected, failed) and the spec's messages. Leaving the
 * page closes every session (spec 1 §4): the views unmount with it.
 */
export function TerminalCard(props: { device: Device; canHost: boolean; canService: boolean }) {
  const { t } = useTranslation();
  const { device } = props;
  const hostOs = useHostOsAccess(device.uuid, props.canHost);
  const services = useServiceRows(device.uuid);
  const [tabs, setTabs] = useState<Tab[]>([]);
  const [active, setActive] = useState<number>();
  const [next, setNext] = useState(1);
  const localMode = device.is_in_local_mode === true;
  const hostAllowed = props.canHost && hostOs.data?.allowed === true;
  const rows = services.data ?? [];
  const running = (status: string) => status.trim().toLowerCase() === "running";
  const offerServices = props.canService && !localMode;
  const targets = [
    ...(hostAllowed ? [{ value: TERMINAL_HOST_TARGET, label: t("devices.terminal.host_os"), enabled: true }] : []),
    ...(offerServices ? rows.map((row) => ({ value: row.name, label: row.name, enabled: running(row.status) })) : []),
  ];
  const [chosen, setChosen] = useState<string>();
  const target = targets.find((option) => option.value === chosen && option.enabled) ?? targets.find((o) => o.enabled);

  const open = () => {
    if (!target) return;
    const count = tabs.filter((tab) => tab.target === target.value).length + 1;
    const tab: Tab = {
      id: next,
      target: target.value,
      label: `${target.label} ${count > 1 ? count : ""}`.trim(),
      status: { state: "connecting" },
      reconnect: 0,
    };
    setNext(next + 1);
    setTabs([...tabs, tab]);
    setActive(tab.id);
  };
  const close = (id: number) => {
    const rest = tabs.filter((tab) => tab.id !== id);
    setTabs(rest);
    if (active === id) setActive(rest.at(-1)?.id);
  };
  const update = (id: number, change: Partial<Tab>) =>
    setTabs((current) => current.map((tab) => (tab.id === id ? { ...tab, ...change } : tab)));
  // The container a service tab is bound to: its image while it runs (a new release, a new container).
  const containerOf = (service: string) => {
    const row = rows.find((r) => r.name === service && running(r.status));
    return row ? String(row.imageId) : undefined;
  };
  const current = tabs.find((tab) => tab.id === active);

  const notes: string[] = [];
  if (!device.is_connected_to_vpn) notes.push(t("devices.terminal.device_offline"));
  if (props.canService && localMode) notes.push(t("devices.terminal.local_mode"));
  if (props.canHost && hostOs.data?.code === "host_os_access_not_supported") {
    notes.push(t("devices.terminal.host_os_not_supported"));
  }

  return (
    <Card
      title={t("devices.terminal.title")}
      action={
        <Box sx={{ display: "flex", gap: 1, alignItems: "center" }}>
          <TextField
            select
            size="small"
            label={t("devices.terminal.target")}
            value={target?.value ?? ""}
            onChange={(event) => setChosen(event.target.value)}
            sx={{ minWidth: 200 }}
            disabled={targets.length === 0}
          >
            {targets.map((option) => (
              <MenuItem key={option.value} value={option.value} disabled={!option.enabled}>
                <ListItemText
                  primary={option.label}
                  secondary={option.enabled ? undefined : t("devices.terminal.service_not_running")}
                  sx={{ my: 0 }}
                />
              </MenuItem>
            ))}
          </TextField>
          <Button
            variant="outlined"
            startIcon={<AddOutlined />}
            disabled={!target}
            onClick={open}
            sx={{ whiteSpace: "nowrap", flexShrink: 0 }}
          >
            {t("devices.terminal.open")}
          </Button>
        </Box>
      }
    >
      {notes.map((note) => (
        <Alert key={note} severity="info" sx={{ mb: 1.5 }}>
          {note}
        </Alert>
      ))}
      {tabs.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {targets.length > 0 ? t("devices.terminal.empty") : t("devices.terminal.no_targets")}
        </Typography>
      ) : (
        <>
          <Box
            role="tablist"
            aria-label={t("devices.terminal.sessions")}
            sx={{ display: "flex", gap: 0.5, borderBottom: 1, borderColor: "divider", mb: 1.5, overflowX: "auto" }}
          >
            {tabs.map((tab) => {
              const selected = tab.id === active;
              return (
                <Box
                  key={tab.id}
                  sx={{
                    display: "flex",
                    alignItems: "center",
                    borderBottom: 2,
                    borderColor: selected ? "primary.main" : "transparent",
                    mb: "-1px",
                  }}
                >
                  <Button
                    role="tab"
                    aria-selected={selected}
                    size="small"
                    color={selected ? "primary" : "inherit"}
                    onClick={() => setActive(tab.id)}
                    sx={{ textTransform: "none", pr: 0.5 }}
                  >
                    <Box
                      component="span"
                      aria-hidden
                      sx={{
                        width: 8,
                        height: 8,
                        borderRadius: "50%",
                        bgcolor: `${STATE_COLOUR[tab.status.state]}.main`,
                        mr: 1,
                      }}
                    />
                    {tab.label}
                  </Button>
                  <IconButton
                    size="small"
                    aria-label={t("devices.terminal.close", { name: tab.label })}
                    onClick={() => close(tab.id)}
                  >
                    <CloseOutlined sx={{ fontSize: 16 }} />
                  </IconButton>
                </Box>
              );
            })}
          </Box>
          {current ? (
            <Box sx={{ display: "flex", alignItems: "center", gap: 1, mb: 1, minHeight: 32 }}>
              <Chip
                size="small"
                color={STATE_COLOUR[current.status.state]}
                variant="outlined"
                label={t(`devices.terminal.state.${current.status.state}`)}
              />
              <Typography variant="body2" color="text.secondary" role="status" sx={{ flex: 1 }}>
                {current.status.message
                  ? current.status.attempt
                    ? t("devices.terminal.retrying", {
                        message: t(current.status.message as "errors.disconnected"),
                        attempt: current.status.attempt,
                      })
                    : t(current.status.message as "errors.disconnected")
                  : ""}
              </Typography>
              {current.status.state === "failed" ? (
                <Button size="small" onClick={() => update(current.id, { reconnect: current.reconnect + 1 })}>
                  {t("devices.terminal.reconnect")}
                </Button>
              ) : null}
            </Box>
          ) : null}
          {tabs.map((tab) => (
            <TerminalView
              key={tab.id}
              uuid={device.uuid}
              target={tab.target}
              label={t("devices.terminal.output", { name: tab.label })}
              visible={tab.id === active}
              rebindKey={tab.target === TERMINAL_HOST_TARGET ? undefined : containerOf(tab.target)}
              reconnectRequest={tab.reconnect}
              onStatus={(status) => update(tab.id, { status })}
            />
          ))}
        </>
      )}
    </Card>
  );
}
