import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Typography from "@mui/material/Typography";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import { type Recovery, type RolloutRow, useRolloutRecovery } from "./data.ts";
import { releaseName } from "./model.ts";

/** A halted rollout, or an aborted one still in effect: the fleet still names its new release. */
export const needsRecovery = (rollout: RolloutRow) =>
  rollout.is_in_effect && (rollout.status === "halted" || rollout.status === "aborted");

/**
 * What to do after a failed rollout (issue finish): the fleet still targets the new release,
 * so say what each choice does and offer both: invalidate the new release, or pin the fleet to
 * the previous one. For those who may steer rollouts; nothing when the rollout needs no recovery.
 */
export function RolloutRecovery(props: { rollout: RolloutRow; fleetId: number; canSteer: boolean }) {
  const { t } = useTranslation();
  const recovery = useRolloutRecovery(props.rollout, props.fleetId);
  const [asked, setAsked] = useState<Recovery>();
  const to = props.rollout.to__release[0];
  const from = props.rollout.from__release[0];
  if (!needsRecovery(props.rollout) || !props.canSteer || !to) return null;
  const names = { to: releaseName(to), from: releaseName(from) };
  const run = (action: Recovery) =>
    recovery.mutate(action, {
      onSuccess: () => {
        setAsked(undefined);
        showToast("success", t(`rollouts.recovery.done.${action}`, names));
      },
    });
  return (
    <Box component="section" aria-label={t("rollouts.recovery.title")} sx={{ mt: 2 }}>
      <Typography variant="subtitle2" component="h3" sx={{ fontWeight: 600, mb: 0.5 }}>
        {t("rollouts.recovery.title")}
      </Typography>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1.5 }}>
        {t(
          !from
            ? "rollouts.recovery.text_no_previous"
            : props.rollout.status === "aborted"
              ? "rollouts.recovery.text_aborted"
              : "rollouts.recovery.text",
          names,
        )}
      </Typography>
      <Box sx={{ display: "flex", gap: 1, flexWrap: "wrap" }}>
        {from ? (
          <Button variant="contained" onClick={() => setAsked("pin")} disabled={recovery.isPending}>
            {t("rollouts.recovery.pin", names)}
          </Button>
        ) : null}
        {to.is_invalidated ? (
          <Typography variant="body2" color="text.secondary" sx={{ alignSelf: "center" }}>
            {t("rollouts.recovery.invalidated", names)}
          </Typography>
        ) : (
          <Button variant="outlined" color="error" onClick={() => setAsked("invalidate")} disabled={recovery.isPending}>
            {t("rollouts.recovery.invalidate", names)}
          </Button>
        )}
      </Box>
      {recovery.error && !asked ? (
        <Alert severity="error" sx={{ mt: 1.5 }}>
          {errorText(recovery.error)}
        </Alert>
      ) : null}
      <ConfirmDialog
        open={asked !== undefined}
        danger={asked === "invalidate"}
        title={asked ? t(`rollouts.recovery.confirm_title.${asked}`, names) : ""}
        text={asked ? t(`rollouts.recovery.confirm_text.${asked}`, names) : ""}
        confirmLabel={asked ? t(`rollouts.recovery.${asked}`, names) : ""}
        busy={recovery.isPending}
        {...(recovery.error && asked ? { error: errorText(recovery.error) } : {})}
        onConfirm={() => asked && run(asked)}
        onClose={() => {
          setAsked(undefined);
          recovery.reset();
        }}
      />
    </Box>
  );
}
