import CloseOutlined from "@mui/icons-material/CloseOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import IconButton from "@mui/material/IconButton";
import Paper from "@mui/material/Paper";
import type { SxProps, Theme } from "@mui/material/styles";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useParams } from "@tanstack/react-router";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { type AccessColumn, AccessList } from "../../components/access-list.tsx";
import { FormDialog } from "../../components/form-dialog.tsx";
import { useSubmission } from "../../components/settings.tsx";

export { useSubmission };

/** A numeric route parameter (the routes' guards already refused non-numeric ids). */
export function useNumericParam(name: "orgId" | "memberId" | "teamId" | "fleetId"): number {
  const params = useParams({ strict: false }) as Record<string, string | undefined>;
  return Number(params[name]);
}

/** A titled card of a summary page; scrolling content is at most 300 px high (spec 3 §9). */
export function Card(props: {
  title: string;
  action?: ReactNode;
  children: ReactNode;
  scroll?: boolean;
  label?: string;
  /** An anchor (`#payment-method`) that leads to this card. */
  id?: string;
  sx?: SxProps<Theme>;
}) {
  return (
    <Paper
      variant="outlined"
      component="section"
      id={props.id}
      aria-label={props.label ?? props.title}
      sx={[{ p: 2, minWidth: 0, scrollMarginTop: 16 }, ...(Array.isArray(props.sx) ? props.sx : [props.sx])]}
    >
      <Box sx={{ display: "flex", alignItems: "center", gap: 1, mb: 1.5, minHeight: 32 }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, flex: 1 }}>
          {props.title}
        </Typography>
        {props.action}
      </Box>
      <Box
        sx={{
          ...(props.scroll ? { maxHeight: 300, overflow: "auto" } : {}),
          // Tables inside a card line up with its title.
          "& .MuiTableCell-root:first-of-type": { pl: 0 },
          "& .MuiTableCell-root:last-of-type": { pr: 0 },
        }}
      >
        {props.children}
      </Box>
    </Paper>
  );
}

/** A one-field dialog (create or rename): required, trimmed; the server's error shows in it. */
export function NameDialog(props: {
  open: boolean;
  title: string;
  label: string;
  submitLabel: string;
  initial?: string;
  onSubmit: (name: string) => Promise<unknown>;
  onClose: () => void;
}) {
  const [name, setName] = useState(props.initial ?? "");
  const { error, setError, busy, run } = useSubmission();
  const [touched, setTouched] = useState(false);
  const missing = name.trim() === "";
  const close = () => {
    setName(props.initial ?? "");
    setError(undefined);
    setTouched(false);
    props.onClose();
  };
  const submit = async () => {
    setTouched(true);
    if (missing) return;
    await run(async () => {
      await props.onSubmit(name.trim());
      setName(props.initial ?? "");
      setTouched(false);
      props.onClose();
    });
  };
  return (
    <FormDialog
      open={props.open}
      onClose={close}
      title={props.title}
      error={error}
      submitLabel={props.submitLabel}
      busy={busy}
      onSubmit={submit}
    >
      <NameField label={props.label} value={name} onChange={setName} touched={touched} />
    </FormDialog>
  );
}

/** A dialog's required name, first in the form; once submitted without one, it says so. */
export function NameField(props: { label: string; value: string; onChange: (name: string) => void; touched: boolean }) {
  const { t } = useTranslation();
  const missing = props.touched && props.value.trim() === "";
  return (
    <TextField
      autoFocus
      fullWidth
      required
      margin="dense"
      label={props.label}
      value={props.value}
      onChange={(event) => props.onChange(event.target.value)}
      error={missing}
      helperText={missing ? t("orgs.name_required") : undefined}
    />
  );
}

/** The height of the selected-items list of access dialogs (spec 2 §9). */
export const SELECTED_LIST_HEIGHT = 300;

/**
 * What an access dialog will add (teams, members, fleets): a list 300 px high (spec 2 §9) that
 * scrolls, each item removable; the multi-select above only says how many.
 */
export function SelectedItems<T extends string | number>(props: {
  label: string;
  items: Array<{ id: T; name: string }>;
  onRemove: (id: T) => void;
}) {
  const { t } = useTranslation();
  return (
    <Box
      component="ul"
      aria-label={props.label}
      sx={{
        height: SELECTED_LIST_HEIGHT,
        overflow: "auto",
        m: 0,
        mt: 1,
        p: 0,
        listStyle: "none",
        border: 1,
        borderColor: "divider",
        borderRadius: 1,
        bgcolor: "background.default",
      }}
    >
      {props.items.length === 0 ? (
        <Box
          component="li"
          sx={{ height: 1, display: "grid", placeItems: "center", color: "text.secondary", typography: "body2" }}
        >
          {t("orgs.nothing_selected")}
        </Box>
      ) : (
        props.items.map((item) => (
          <Box
            component="li"
            key={item.id}
            sx={{
              display: "flex",
              alignItems: "center",
              gap: 1,
              pl: 1.5,
              pr: 0.5,
              py: 0.25,
              borderBottom: 1,
              borderColor: "divider",
              bgcolor: "background.paper",
            }}
          >
            <Typography variant="body2" noWrap sx={{ flex: 1 }}>
              {item.name}
            </Typography>
            <IconButton
              size="small"
              aria-label={t("orgs.remove_selected", { name: item.name })}
              onClick={() => props.onRemove(item.id)}
            >
              <CloseOutlined fontSize="small" />
            </IconButton>
          </Box>
        ))
      )}
    </Box>
  );
}

/** A multi-select's text when the chosen items are listed below it: "3 selected". */
export const countSelected =
  (t: (key: "orgs.selected_count", options: { count: number }) => string) => (value: unknown) =>
    t("orgs.selected_count", { count: Array.isArray(value) ? value.length : 0 });

/** A notice instead of a page's content when the user may not see or change it. */
export function Notice({ children }: { children: ReactNode }) {
  return (
    <Alert severity="info" variant="outlined" sx={{ mb: 2 }}>
      {children}
    </Alert>
  );
}

/**
 * The pending invitations of an organization or a fleet, each with Revoke (spec 3 §5, spec 2 §5);
 * "No pending invitations" when there is none.
 */
export function PendingInvitations<Row extends { id: number }>(props: {
  rows: readonly Row[];
  columns: ReadonlyArray<AccessColumn<Row>>;
  head?: boolean;
  onRevoke: (invite: Row) => void;
}) {
  const { t } = useTranslation();
  return (
    <Card title={t("orgs.pending_invitations")}>
      <AccessList
        label={t("orgs.pending_invitations")}
        rows={props.rows}
        head={props.head ?? true}
        empty={
          <Typography variant="body2" color="text.secondary">
            {t("orgs.no_invitations")}
          </Typography>
        }
        columns={props.columns}
        actions={[{ text: t("orgs.revoke"), color: "error", onClick: props.onRevoke }]}
      />
    </Card>
  );
}
