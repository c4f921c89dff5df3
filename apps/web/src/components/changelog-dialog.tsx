import { APP_VERSION } from "@flotilla/domain";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { usePreference } from "../lib/use-preference.ts";
import { parseChangelog, shouldShowChangelog } from "./changelog.ts";

/**
 * The changelog dialog (spec 1 §2.5, §7): opens by itself when the major version this browser
 * last saw is below the running one; its content is the public `/changelog.json`.
 */
export function ChangelogDialog() {
  const { t } = useTranslation();
  const [seen, setSeen] = usePreference("changelogVersion");
  const [open] = useState(() => shouldShowChangelog(seen, APP_VERSION));
  const [closed, setClosed] = useState(false);
  useEffect(() => {
    if (!seen) setSeen(APP_VERSION);
  }, [seen, setSeen]);
  const changelog = useQuery({
    queryKey: ["changelog"],
    enabled: open,
    queryFn: async () => parseChangelog(await (await fetch("/changelog.json", { cache: "no-cache" })).json()),
    meta: { handlesErrors: true },
  });
  const close = () => {
    setSeen(APP_VERSION);
    setClosed(true);
  };
  return (
    <Dialog open={open && !closed} onClose={close} maxWidth="sm" fullWidth>
      <DialogTitle>{t("changelog.title", { version: APP_VERSION })}</DialogTitle>
      <DialogContent>
        {changelog.data ? null : <Typography color="text.secondary">{t("changelog.loading")}</Typography>}
        {changelog.data?.map((entry) => (
          <Box key={entry.version} sx={{ mb: 2 }}>
            <Typography variant="subtitle2">
              {entry.version} · {entry.date}
            </Typography>
            <Box component="ul" sx={{ m: 0, pl: 2.5 }}>
              {entry.changes.map((change) => (
                <Typography component="li" variant="body2" key={change}>
                  {change}
                </Typography>
              ))}
            </Box>
          </Box>
        ))}
      </DialogContent>
      <DialogActions>
        <Button variant="contained" onClick={close}>
          {t("changelog.close")}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
