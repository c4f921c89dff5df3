import { pastDueState } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import { useQuery } from "@tanstack/react-query";
import { Outlet, useParams, useRouterState } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { useSdk, useServices } from "../../app-services.tsx";
import { ButtonLink } from "../../components/links.tsx";
import { deviceQuery } from "../devices/data.ts";
import { useFleet } from "../fleet-access/data.ts";
import { organizationCan } from "../orgs/access.ts";
import { useMyRoleIn, useOrganization } from "../orgs/data.ts";
import { billingApi } from "./api.ts";

/**
 * The past-due banner of an organization (spec 3 §4 "Past due and frozen"), from its
 * has_past_due_invoice_since__date through the domain's pastDueState: under 30 days a warning,
 * from 30 days an error counting the days until the freeze, frozen at 60. Only those who may
 * change billing (the administrators) get the link to the billing page; others are told to
 * contact an administrator.
 */
export function PastDueBanner({ orgId }: { orgId: number | undefined }) {
  const { t } = useTranslation();
  const org = useOrganization(orgId ?? 0, orgId !== undefined, true);
  const role = useMyRoleIn(orgId);
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const { sdk, config } = useServices();
  const pastDue = Boolean(org.data?.has_past_due_invoice_since__date);
  // Days count by billing time, which the test clock may have moved ahead of this one.
  const clock = useQuery({
    queryKey: ["billing", "clock"],
    queryFn: () => billingApi(sdk, config.apiUrl).getClock(),
    enabled: pastDue,
    staleTime: 60_000,
    throwOnError: false,
    meta: { handlesErrors: true },
  });
  if (orgId === undefined || !org.data) return null;
  // The server's is_frozen is the word on freezing.
  const state = org.data.is_frozen
    ? ({ state: "frozen", daysPastDue: 60 } as const)
    : pastDueState(org.data.has_past_due_invoice_since__date, clock.data ? new Date(clock.data.now) : new Date());
  if (state.state === "none") return null;
  const canBill = organizationCan(role.data ?? undefined, "organization", "access_billing");
  const onBilling = pathname.startsWith(`/orgs/${orgId}/billing`);
  const text =
    state.state === "warning"
      ? state.daysPastDue < 1
        ? t("billing.past_due.warning_today")
        : t("billing.past_due.warning", { count: state.daysPastDue })
      : state.state === "error"
        ? t("billing.past_due.error", { count: state.daysUntilFreeze })
        : t("billing.past_due.frozen");
  return (
    <Alert
      severity={state.state === "warning" ? "warning" : "error"}
      data-testid="past-due-banner"
      sx={{ mb: 2 }}
      action={
        canBill && !onBilling ? (
          <ButtonLink
            color="inherit"
            size="small"
            variant="outlined"
            to="/orgs/$orgId/billing"
            params={{ orgId: String(orgId) }}
            hash="payment-method"
            sx={{ whiteSpace: "nowrap" }}
          >
            {t("billing.past_due.update_link")}
          </ButtonLink>
        ) : undefined
      }
    >
      {text}
      {role.isSuccess && !canBill ? ` ${t("billing.past_due.contact_admin")}` : null}
    </Alert>
  );
}

/** `/orgs/{orgId}/…`: the organization's pages under its past-due banner. */
export function OrgLayout() {
  const params = useParams({ strict: false }) as { orgId?: string };
  const orgId = params.orgId && /^\d+$/.test(params.orgId) ? Number(params.orgId) : undefined;
  return (
    <>
      <PastDueBanner orgId={orgId} />
      <Outlet />
    </>
  );
}

/** `/fleets/{id}/…` (and apps, blocks): the fleet's pages under its organization's past-due banner. */
export function FleetLayout() {
  const params = useParams({ strict: false }) as { fleetId?: string };
  const fleetId = params.fleetId && /^\d+$/.test(params.fleetId) ? Number(params.fleetId) : undefined;
  const fleet = useFleet(fleetId ?? 0, fleetId !== undefined, true);
  return (
    <>
      <PastDueBanner orgId={fleet.data?.organization[0]?.id} />
      <Outlet />
    </>
  );
}

/** `/devices/{uuid}/…`: the device's pages under its organization's past-due banner (spec 3 §4). */
export function DeviceLayout() {
  const sdk = useSdk();
  const params = useParams({ strict: false }) as { uuid?: string };
  const uuid = params.uuid ?? "";
  // The device page's own query (it polls); here only its fleet is read.
  const device = useQuery({ ...deviceQuery(sdk, uuid), enabled: uuid !== "", throwOnError: false });
  const fleetId = device.data?.belongs_to__application[0]?.id;
  const fleet = useFleet(fleetId ?? 0, fleetId !== undefined, true);
  return (
    <>
      <PastDueBanner orgId={fleet.data?.organization[0]?.id} />
      <Outlet />
    </>
  );
}
