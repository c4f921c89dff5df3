import Chip from "@mui/material/Chip";
import { useTranslation } from "react-i18next";

/** The pill of a fleet type option or device type: unavailable, coming soon, paid only, discontinued. */
export function FleetTypePill({ pill }: { pill: "unavailable" | "coming_soon" | "paid_only" | "discontinued" }) {
  const { t } = useTranslation();
  return (
    <Chip
      size="small"
      variant="outlined"
      color={pill === "paid_only" ? "primary" : "default"}
      label={t(`fleets.pills.${pill}`)}
      sx={{ height: 18, fontSize: 11, fontWeight: 600, "& .MuiChip-label": { px: 0.75 } }}
    />
  );
}
