import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Paper from "@mui/material/Paper";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { PageHeader } from "../../components/page.tsx";
import { type SupervisorAction, SupervisorActionDialog } from "./actions.tsx";
import { actionBlockedReason as blockedReason, usePageDevice } from "./data.ts";

const PRIMARY: SupervisorAction[] = ["identify", "restart"];
const DANGER: SupervisorAction[] = ["purge", "reboot", "shutdown"];

function ActionRow(props: { action: SupervisorAction; danger?: boolean; reason?: string; onRun: () => void }) {
  const { t } = useTranslation();
  return (
    <Box
      component="section"
      aria-label={t(`devices.actions.${props.action}`)}
      sx={{
        display: "flex",
        alignItems: "center",
        gap: 2,
        px: 2.5,
        py: 2,
        "& + &": { borderTop: 1, borderColor: "divider" },
      }}
    >
      <Box sx={{ flex: 1 }}>
        <Typography variant="subtitle2" component="h3" sx={{ fontWeight: 600 }}>
          {t(`devices.actions.${props.action}`)}
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {t(`devices.actions.${props.action}_help`)}
        </Typography>
      </Box>
      <Tooltip title={props.reason ?? ""}>
        <span>
          <Button
            variant={props.danger ? "outlined" : "contained"}
            color={props.danger ? "error" : "primary"}
            disabled={props.reason !== undefined}
            onClick={props.onRun}
          >
            {t(`devices.actions.${props.action}`)}
          </Button>
        </span>
      </Tooltip>
    </Box>
  );
}

/** `/devices/{uuid}/actions` (spec 2 §2): blink and restart; purge, reboot and shutdown as danger actions. */
export function DeviceActionsPage() {
  const { t } = useTranslation();
  const { device, abilities } = usePageDevice();
  const [action, setAction] = useState<SupervisorAction>();
  if (!device) return null;
  const blocked = blockedReason(device);
  const reason = !abilities.supervisor
    ? t("devices.errors.not_allowed")
    : blocked
      ? t(`devices.errors.${blocked}`)
      : undefined;
  return (
    <>
      <PageHeader title={t("devices.actions.title")} description={t("devices.actions.description")} />
      {device.is_in_local_mode ? (
        <Alert severity="info" sx={{ mb: 2 }}>
          {t("devices.errors.local_mode")}
        </Alert>
      ) : null}
      {reason && abilities.supervisor ? (
        <Alert severity="warning" sx={{ mb: 2 }}>
          {reason}
        </Alert>
      ) : null}
      <Paper variant="outlined" sx={{ mb: 3 }}>
        {PRIMARY.map((name) => (
          <ActionRow key={name} action={name} reason={reason} onRun={() => setAction(name)} />
        ))}
      </Paper>
      <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, color: "error.main", mb: 1 }}>
        {t("devices.actions.danger")}
      </Typography>
      <Paper variant="outlined" sx={{ borderColor: "error.light" }}>
        {DANGER.map((name) => (
          <ActionRow key={name} action={name} danger reason={reason} onRun={() => setAction(name)} />
        ))}
      </Paper>
      <SupervisorActionDialog action={action} devices={[device]} onClose={() => setAction(undefined)} />
    </>
  );
}
