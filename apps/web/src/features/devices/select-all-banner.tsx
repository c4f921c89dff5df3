import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import { alpha } from "@mui/material/styles";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";

/**
 * Above the table once every row of the page is selected (Gmail style): offers the whole filter,
 * "Select all N devices that match", and once taken, a way back.
 */
export function SelectAllBanner(props: {
  pageCount: number;
  total: number;
  all: boolean;
  onSelectAll: () => void;
  onClear: () => void;
}) {
  const { t, i18n } = useTranslation();
  const total = props.total.toLocaleString(i18n.language);
  return (
    <Box
      role="status"
      sx={{
        display: "flex",
        alignItems: "center",
        justifyContent: "center",
        flexWrap: "wrap",
        columnGap: 1,
        px: 2,
        py: 0.5,
        // The selected rows' tint, so the banner reads as part of the selection.
        bgcolor: (theme) => alpha(theme.palette.primary.main, 0.08),
        borderBottom: 1,
        borderColor: "divider",
      }}
    >
      <Typography variant="body2">
        {props.all
          ? t("devices.all_matching.selected", { total })
          : t("devices.all_matching.page_selected", { count: props.pageCount })}
      </Typography>
      {props.all ? (
        <Button size="small" onClick={props.onClear}>
          {t("devices.all_matching.clear")}
        </Button>
      ) : (
        <Button size="small" onClick={props.onSelectAll}>
          {t("devices.all_matching.select", { total })}
        </Button>
      )}
    </Box>
  );
}
