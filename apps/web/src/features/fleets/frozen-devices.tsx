import Alert from "@mui/material/Alert";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import List from "@mui/material/List";
import ListItem from "@mui/material/ListItem";
import ListItemText from "@mui/material/ListItemText";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { pineOf } from "../orgs/data.ts";

/**
 * Devices beyond the free allowance are frozen (spec 2 §4, decision 13): a notice, and a dialog
 * listing this fleet's frozen devices (device.is_frozen).
 */
export function FrozenDevicesNotice({ fleetId }: { fleetId: number }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const [open, setOpen] = useState(false);
  const frozen = useQuery({
    queryKey: ["fleet", fleetId, "frozen-devices"],
    queryFn: () =>
      pineOf(sdk).get<Array<{ id: number; uuid: string; device_name: string }>>({
        resource: "device",
        options: {
          $select: ["id", "uuid", "device_name"],
          $filter: { belongs_to__application: fleetId, is_frozen: true },
          $orderby: { device_name: "asc" },
        },
      }),
  });
  const rows = frozen.data ?? [];
  return (
    <>
      <Alert
        severity="error"
        sx={{ mb: 2 }}
        action={
          rows.length > 0 ? (
            <Button color="inherit" size="small" onClick={() => setOpen(true)}>
              {t("fleets.frozen.show")}
            </Button>
          ) : undefined
        }
      >
        {t("fleets.frozen.notice")}
      </Alert>
      <Dialog open={open} onClose={() => setOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{t("fleets.frozen.title")}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 1 }}>{t("fleets.frozen.text")}</DialogContentText>
          <List dense disablePadding aria-label={t("fleets.frozen.title")}>
            {rows.map((device) => (
              <ListItem key={device.id} disableGutters>
                <ListItemText primary={device.device_name} secondary={device.uuid.slice(0, 7)} />
              </ListItem>
            ))}
          </List>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setOpen(false)}>{t("fleets.frozen.close")}</Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
