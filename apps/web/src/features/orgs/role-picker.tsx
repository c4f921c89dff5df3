import { type FleetRole, formatDollarsPerMonth, type SeatOffer, seatOfferCents } from "@flotilla/domain";
import Box from "@mui/material/Box";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { TextLink } from "../../components/links.tsx";
import { type ApplicationClass, fleetRoleOptions, type PlanAccess, ROLE_PRICES } from "./access.ts";
import { offerFor, offerText, useSeats } from "./seats.ts";

/**
 * The fleet role picker (spec 2 §6): each role with its price per member and month; paid-only
 * roles are greyed out on free plans with "access role only available for paid users" and an
 * upgrade link; operator roles only for fleets; limited roles only when the plan provides them.
 */
export function FleetRolePicker(props: {
  value: FleetRole | "";
  onChange: (role: FleetRole) => void;
  plan: PlanAccess;
  applicationClass: ApplicationClass;
  orgId?: number;
  label?: string;
  size?: "small" | "medium";
  allowEmpty?: boolean;
  disabled?: boolean;
}) {
  const { t } = useTranslation();
  const options = fleetRoleOptions({ ...props.plan, applicationClass: props.applicationClass });
  const seats = useSeats(props.orgId);
  return (
    <TextField
      select
      fullWidth
      size={props.size ?? "medium"}
      margin={props.size === "small" ? "none" : "dense"}
      label={props.label ?? t("orgs.role")}
      value={props.value}
      disabled={props.disabled}
      onChange={(event) => {
        const role = event.target.value as FleetRole;
        if (options.some((option) => option.role === role && !option.disabled)) props.onChange(role);
      }}
      slotProps={{ select: { renderValue: (value) => (value ? t(`orgs.fleet_roles.${value as FleetRole}`) : "") } }}
    >
      {props.allowEmpty ? <MenuItem value="">—</MenuItem> : null}
      {options.map((option) => {
        // The price, or how many of the plan's seats of this role are used (spec 3 §6).
        const price = offerText(t, offerFor(option.role, option.price * 100, seats));
        const row = (
          <Box sx={{ display: "flex", width: "100%", gap: 2, alignItems: "baseline" }}>
            <Typography variant="body2" sx={{ flex: 1 }}>
              {t(`orgs.fleet_roles.${option.role}`)}
            </Typography>
            <Typography variant="caption" color="text.secondary">
              {price}
            </Typography>
          </Box>
        );
        return (
          <MenuItem
            key={option.role}
            value={option.role}
            aria-disabled={option.disabled ? "true" : undefined}
            sx={option.disabled ? { opacity: 0.5, cursor: "not-allowed" } : undefined}
          >
            {option.disabled ? (
              <Tooltip
                placement="right"
                title={
                  <span>
                    {t("orgs.paid_only_role")}{" "}
                    {props.orgId ? (
                      <TextLink
                        to="/orgs/$orgId/billing"
                        params={{ orgId: String(props.orgId) }}
                        hash="billing-plans"
                        color="inherit"
                        underline="always"
                      >
                        {t("orgs.upgrade")}
                      </TextLink>
                    ) : null}
                  </span>
                }
              >
                {row}
              </Tooltip>
            ) : (
              row
            )}
          </MenuItem>
        );
      })}
    </TextField>
  );
}

/**
 * What adding a member with this fleet role costs (spec 3 §9): the seat's price as the month's
 * total, "$49.00/month", with 2 decimals; nothing while the plan's seats of the role last;
 * observers are free.
 */
export function SeatTotal(props: { role: FleetRole | ""; orgId?: number }) {
  const seats = useSeats(props.orgId);
  if (!props.role) return null;
  return <OfferTotal offer={offerFor(props.role, ROLE_PRICES[props.role] * 100, seats)} texts="seat" />;
}

const TOTAL_TEXTS = {
  seat: { included: "orgs.seat_total_included", free: "orgs.seat_total_free", priced: "orgs.seat_total" },
  invite: { included: "orgs.invite_cost_included", free: "orgs.invite_cost_free", priced: "orgs.invite_cost" },
} as const;

/** A dialog's total for one more member (a fleet seat, an organization invite), read out as it changes. */
export function OfferTotal(props: { offer: SeatOffer; texts: keyof typeof TOTAL_TEXTS }) {
  const { t } = useTranslation();
  const { offer } = props;
  const texts = TOTAL_TEXTS[props.texts];
  return (
    <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }} aria-live="polite">
      {offer.kind === "included"
        ? t(texts.included, { used: offer.used, included: offer.included })
        : offer.kind === "free"
          ? t(texts.free)
          : t(texts.priced, { total: formatDollarsPerMonth(seatOfferCents(offer)) })}
    </Typography>
  );
}
