import { DATE_FORMAT, FREE_PLAN_NUDGE_DEVICE_COUNT, freePlanDeviceBlock } from "@flotilla/domain";
import AddOutlined from "@mui/icons-material/AddOutlined";
import RocketLaunchOutlined from "@mui/icons-material/RocketLaunchOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import CircularProgress from "@mui/material/CircularProgress";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useQueryClient } from "@tanstack/react-query";
import { format } from "date-fns";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { ButtonLink, TextLink } from "../../components/links.tsx";
import { PageHeader } from "../../components/page.tsx";
import { Facts } from "../../components/settings.tsx";
import { SupportAccessBanner } from "../../components/support-access-banner.tsx";
import { useLookup } from "../../lib/lookup.ts";
import { reportError, showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { type Fleet, fleetAbilities, useFleet } from "../fleet-access/data.ts";
import { pineOf } from "../orgs/data.ts";
import { Card, useNumericParam } from "../orgs/ui.tsx";
import { ReleasePicker, TRACK_LATEST } from "../releases/release-picker.tsx";
import { ReleaseFlags, ReleaseStatus, ReleaseVersion } from "../releases/release-status.tsx";
import { FleetRolloutCard } from "../rollouts/rollout-cards.tsx";
import { classPath, useOrganizationPlan } from "./data.ts";
import { FrozenDevicesNotice } from "./frozen-devices.tsx";
import { buildInProgress, shortCommit, useFleetReleases } from "./releases.ts";
import { StatusDot, statusBreakdown } from "./status.tsx";

export function usePageFleet() {
  const fleetId = useNumericParam("fleetId");
  const fleet = useLookup<Fleet>(useFleet(fleetId));
  return { fleetId, fleet, abilities: fleetAbilities(fleet) };
}

/** Free plan warnings (spec 2 §5, decision 13) and whether adding devices is blocked. */
export function useFreePlan(orgId: number | undefined) {
  const plan = useOrganizationPlan(orgId);
  const allowance = plan.data?.free_plan_device_allowance ?? null;
  const block =
    allowance === null || !plan.data ? undefined : freePlanDeviceBlock(plan.data.total_device_count, allowance);
  // Four or more devices on the free plan earn an upgrade nudge (decision 13), nothing more.
  const nudge = allowance !== null && !block && (plan.data?.total_device_count ?? 0) >= FREE_PLAN_NUDGE_DEVICE_COUNT;
  return { plan: plan.data, block, nudge };
}

function FleetCard({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const abilities = fleetAbilities(fleet);
  const org = fleet.organization[0];
  const deviceType = fleet.is_for__device_type[0];
  return (
    <Card title={t(`fleets.card.${fleet.is_of__class}`)}>
      <Facts
        rows={[
          [t("fleets.architecture"), deviceType?.is_of__cpu_architecture[0]?.slug ?? "—"],
          [
            t("fleets.slug"),
            <Box component="span" sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13 }} key="slug">
              {fleet.slug}
            </Box>,
          ],
          [t("fleets.columns.created"), format(new Date(fleet.created_at), DATE_FORMAT)],
          [t("fleets.application_type"), fleet.application_type[0]?.name ?? "—"],
          [t("fleets.device_type"), deviceType?.name ?? "—"],
          [
            t("fleets.organization"),
            org ? (
              <TextLink key="org" to="/orgs/$orgId" params={{ orgId: String(org.id) }} underline="hover">
                {org.name}
              </TextLink>
            ) : (
              "—"
            ),
          ],
          [
            t("fleet.your_role"),
            <span data-testid="fleet-role" key="role">
              {t(`orgs.fleet_roles.${abilities.role}`)}
            </span>,
          ],
        ]}
      />
    </Card>
  );
}

function DeviceStatusCard({ fleet, blocked }: { fleet: Fleet; blocked: string | undefined }) {
  const { t } = useTranslation();
  const abilities = fleetAbilities(fleet);
  const { rows, total } = statusBreakdown(fleet.device_count_grouped_by_status);
  const addDevice = abilities.addDevice ? (
    <Tooltip title={blocked ?? ""} disableInteractive>
      <span>
        <ButtonLink
          to={`/fleets/${fleet.id}/devices` as "/"}
          variant={total === 0 ? "contained" : "outlined"}
          size="small"
          startIcon={<AddOutlined />}
          disabled={blocked !== undefined}
        >
          {t("fleets.add_device")}
        </ButtonLink>
      </span>
    </Tooltip>
  ) : null;
  return (
    <Card title={t("fleets.device_status")} action={total > 0 ? addDevice : null}>
      {total === 0 ? (
        <Box sx={{ display: "flex", flexDirection: "column", alignItems: "flex-start", gap: 1.5 }}>
          <Typography variant="body2" color="text.secondary">
            {addDevice ? t("fleets.no_devices_yet") : t("fleets.no_devices_read_only")}
          </Typography>
          {addDevice}
        </Box>
      ) : (
        <Table size="small" aria-label={t("fleets.device_status")}>
          <TableBody>
            {rows.map((row) => (
              <TableRow key={row.status} sx={{ "&:last-child td": { borderBottom: 0 } }}>
                <TableCell sx={{ py: 0.75 }}>
                  <Box sx={{ display: "flex", alignItems: "center", gap: 1 }}>
                    <StatusDot status={row.status} />
                    {t(`fleets.status.${row.status}`)}
                  </Box>
                </TableCell>
                <TableCell
                  align="right"
                  sx={{
                    py: 0.75,
                    fontVariantNumeric: "tabular-nums",
                    fontWeight: 600,
                    color: row.count === 0 ? "text.disabled" : "text.primary",
                  }}
                >
                  {row.count}
                </TableCell>
              </TableRow>
            ))}
            <TableRow>
              <TableCell sx={{ py: 0.75, fontWeight: 600, borderBottom: 0 }}>{t("fleets.total")}</TableCell>
              <TableCell
                align="right"
                sx={{ py: 0.75, fontWeight: 700, borderBottom: 0, fontVariantNumeric: "tabular-nums" }}
              >
                {total}
              </TableCell>
            </TableRow>
          </TableBody>
        </Table>
      )}
    </Card>
  );
}

function ReleasesCard({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const releases = useFleetReleases(fleet.id, { poll: true });
  const building = buildInProgress(releases.data);
  const base = `${classPath(fleet.is_of__class)}/${fleet.id}`;
  // "pinned" only when the fleet holds a fixed release; a fleet tracking the latest is not pinned (spec 2 §4).
  const pinned = fleet.should_track_latest_release ? undefined : fleet.should_be_running__release[0]?.id;
  const rows = (releases.data ?? []).slice(0, 8);
  return (
    <Card
      title={t("fleets.releases")}
      action={
        <Box sx={{ display: "flex", alignItems: "center", gap: 2 }}>
          {building ? (
            <TextLink to={`${base}/releases/${building.id}` as "/"} underline="hover" variant="body2">
              <Box component="span" sx={{ display: "inline-flex", alignItems: "center", gap: 0.75 }}>
                <CircularProgress size={12} />
                {t("fleets.build_in_progress")}
              </Box>
            </TextLink>
          ) : null}
          <ButtonLink to={`${base}/releases` as "/"} size="small">
            {t("fleets.all_releases")}
          </ButtonLink>
        </Box>
      }
    >
      {releases.isSuccess && rows.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {t("fleets.no_releases")}
        </Typography>
      ) : (
        <Table size="small" aria-label={t("fleets.releases")}>
          <TableHead>
            <TableRow>
              <TableCell>{t("fleets.commit")}</TableCell>
              <TableCell>{t("fleets.version")}</TableCell>
              <TableCell>{t("fleets.columns.status")}</TableCell>
              <TableCell align="right">{t("fleets.columns.created")}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {rows.map((release) => (
              <TableRow key={release.id}>
                <TableCell sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13 }}>
                  <TextLink to={`${base}/releases/${release.id}` as "/"} underline="hover">
                    {shortCommit(release.commit)}
                  </TextLink>
                  {pinned === release.id ? (
                    <Chip size="small" label={t("fleets.pinned")} sx={{ ml: 1, height: 18, fontSize: 11 }} />
                  ) : null}
                </TableCell>
                <TableCell>
                  <TextLink to={`${base}/releases/${release.id}` as "/"} underline="hover">
                    <ReleaseVersion release={release} />
                  </TextLink>
                </TableCell>
                <TableCell>
                  <Box component="span" sx={{ display: "inline-flex", alignItems: "center", gap: 0.75 }}>
                    <ReleaseStatus release={release} />
                    {/* An invalidated release is flagged in lists (spec 2 §4 Release rules). */}
                    {release.is_invalidated ? <ReleaseFlags release={{ ...release, is_final: true }} /> : null}
                  </Box>
                </TableCell>
                <TableCell align="right" sx={{ whiteSpace: "nowrap" }}>
                  {format(new Date(release.created_at), DATE_FORMAT)}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
    </Card>
  );
}

/** App and block summary (spec 2 §2): image reference, default release selector, deploy-to-fleet soon. */
function BlockCard({ fleet }: { fleet: Fleet }) {
  const { t } = useTranslation();
  const { config, sdk } = useServices();
  const queryClient = useQueryClient();
  const abilities = fleetAbilities(fleet);
  const registryHost = new URL(config.apiUrl).host;
  const pinned = fleet.should_be_running__release[0];
  const current = fleet.should_track_latest_release ? TRACK_LATEST : String(pinned?.id ?? TRACK_LATEST);
  const change = async (value: string) => {
    try {
      await pineOf(sdk).patch({
        resource: "application",
        id: fleet.id,
        body:
          value === TRACK_LATEST
            ? { should_track_latest_release: true }
            : { should_track_latest_release: false, should_be_running__release: Number(value) },
      });
      showToast("success", value === TRACK_LATEST ? t("fleets.tracking_latest") : t("fleets.pinned_to_release"));
      await queryClient.invalidateQueries({ queryKey: ["fleet", fleet.id] });
    } catch (error) {
      reportError(error);
    }
  };
  return (
    <Card title={t(`fleets.card.${fleet.is_of__class}_release`)}>
      <Facts
        rows={[
          [
            t("fleets.image_reference"),
            <Box component="code" key="image" sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13 }}>
              {`${registryHost}/${fleet.slug}`}
            </Box>,
          ],
        ]}
      />
      <ReleasePicker
        fleetId={fleet.id}
        kind="fleet"
        label={t("fleets.default_release")}
        value={current}
        disabled={!abilities.update}
        onChange={(value) => void change(value)}
        current={fleet.should_track_latest_release ? undefined : pinned}
        fullWidth={false}
        sx={{ mt: 2, minWidth: 320 }}
      />
      <Box sx={{ mt: 2 }}>
        <Tooltip title={t("fleets.coming_soon")}>
          <span>
            <Button variant="outlined" size="small" startIcon={<RocketLaunchOutlined />} disabled>
              {t("fleets.deploy_to_fleet")} · {t("fleets.coming_soon")}
            </Button>
          </span>
        </Tooltip>
      </Box>
    </Card>
  );
}

/** `/fleets|apps|blocks/{id}` (spec 2 §2 "Fleet summary"). */
export function FleetSummaryPage() {
  const { t } = useTranslation();
  const { fleet } = usePageFleet();
  const free = useFreePlan(fleet?.organization[0]?.id);
  if (!fleet) return null;
  const blockedText = free.block
    ? t(`fleets.free_plan.${free.block === "free plan allowance reached" ? "reached" : "exceeded"}`)
    : undefined;
  return (
    <>
      <PageHeader title={fleet.app_name} description={t(`fleets.summary_description.${fleet.is_of__class}`)} />
      <SupportAccessBanner kind="fleet" until={fleet.is_accessible_by_support_until__date} />
      {free.block ? (
        <Alert severity="warning" sx={{ mb: 2 }}>
          {blockedText}
        </Alert>
      ) : null}
      {free.nudge && free.plan ? (
        <Alert severity="info" sx={{ mb: 2 }}>
          {t("fleets.free_plan.nudge", {
            count: free.plan.total_device_count,
            allowance: free.plan.free_plan_device_allowance,
          })}
        </Alert>
      ) : null}
      {free.plan?.has_frozen_free_devices ? <FrozenDevicesNotice fleetId={fleet.id} /> : null}
      <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: { xs: "1fr", lg: "1fr 1fr" }, alignItems: "start" }}>
        <FleetCard fleet={fleet} />
        {fleet.is_of__class === "fleet" ? (
          <DeviceStatusCard fleet={fleet} blocked={blockedText} />
        ) : (
          <BlockCard fleet={fleet} />
        )}
        {fleet.is_of__class === "fleet" ? (
          <Box sx={{ gridColumn: { lg: "1 / -1" }, "&:empty": { display: "none" } }}>
            <FleetRolloutCard fleetId={fleet.id} canSteer={fleetAbilities(fleet).steerRollout} />
          </Box>
        ) : null}
        <Box sx={{ gridColumn: { lg: "1 / -1" } }}>
          <ReleasesCard fleet={fleet} />
        </Box>
      </Box>
    </>
  );
}
