import NavigateNext from "@mui/icons-material/NavigateNext";
import Breadcrumbs from "@mui/material/Breadcrumbs";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { useMatches } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { useSdk } from "../app-services.tsx";
import { deviceQuery } from "../features/devices/data.ts";
import { useFleet } from "../features/fleet-access/data.ts";
import { pineOf, useOrganization, useTeams } from "../features/orgs/data.ts";
import { releaseQuery } from "../features/releases/data.ts";
import { versionText } from "../features/releases/model.ts";
import type { CrumbKey, CrumbObject } from "../router.tsx";
import { TextLink } from "./links.tsx";

interface Crumb {
  path: string;
  label: CrumbKey | undefined;
  object: CrumbObject | undefined;
  params: Record<string, string>;
}

/** The name of the organization, member, team or fleet a crumb stands for ("…" while loading). */
function ObjectName({ kind, params }: { kind: CrumbObject; params: Record<string, string> }) {
  const sdk = useSdk();
  const orgId = Number(params.orgId ?? 0);
  const org = useOrganization(kind === "org" ? orgId : 0, kind === "org", true);
  const teams = useTeams(kind === "team" ? orgId : 0, kind === "team", true);
  const fleet = useFleet(Number(params.fleetId ?? 0), kind === "fleet", true);
  const device = useQuery({ ...deviceQuery(sdk, params.uuid ?? ""), enabled: kind === "device", throwOnError: false });
  const release = useQuery({
    ...releaseQuery(sdk, Number(params.fleetId ?? 0), Number(params.releaseId ?? 0)),
    enabled: kind === "release" && /^\d+$/.test(params.releaseId ?? ""),
    throwOnError: false,
  });
  const member = useQuery({
    queryKey: ["orgs", orgId, "member-name", params.memberId],
    enabled: kind === "member",
    throwOnError: false,
    queryFn: () =>
      pineOf(sdk).get<{ user: Array<{ username: string }> } | undefined>({
        resource: "organization_membership",
        id: Number(params.memberId),
        options: { $select: "id", $expand: { user: { $select: "username" } } },
      }),
  });
  const name =
    kind === "org"
      ? org.data?.name
      : kind === "team"
        ? teams.data?.find((team) => team.id === Number(params.teamId))?.name
        : kind === "fleet"
          ? fleet.data?.app_name
          : kind === "device"
            ? device.data?.device_name
            : kind === "release"
              ? release.data && versionText(release.data)
              : member.data?.user[0]?.username;
  return <>{name ?? "…"}</>;
}

/** Home > Fleets > …, from the `crumb` of each matched route (spec 1 §2.5). */
export function AppBreadcrumbs() {
  const { t } = useTranslation();
  const crumbs = useMatches({
    select: (matches): Crumb[] =>
      matches.flatMap((match): Crumb[] => {
        const path = match.pathname.replace(/\/+$/, "") || "/";
        if (match.staticData.crumbObject) {
          const params = match.params as Record<string, string>;
          return [{ object: match.staticData.crumbObject, params, path, label: undefined }];
        }
        return match.staticData.crumb ? [{ label: match.staticData.crumb, path, object: undefined, params: {} }] : [];
      }),
  });
  // A device page sits under its fleet: Fleets › {fleet} › Devices › {device}.
  const sdk = useSdk();
  const deviceCrumb = crumbs.find((crumb) => crumb.object === "device");
  const device = useQuery({
    ...deviceQuery(sdk, deviceCrumb?.params.uuid ?? ""),
    enabled: deviceCrumb !== undefined,
    throwOnError: false,
  });
  const fleetId = device.data?.belongs_to__application[0]?.id;
  const trail = crumbs.flatMap((crumb): Crumb[] =>
    crumb.object === "device" && fleetId !== undefined
      ? [
          { path: "/fleets", label: "nav.fleets", object: undefined, params: {} },
          { path: `/fleets/${fleetId}`, label: undefined, object: "fleet", params: { fleetId: String(fleetId) } },
          { path: `/fleets/${fleetId}/devices`, label: "nav.devices", object: undefined, params: {} },
          crumb,
        ]
      : [crumb],
  );
  // A route and its index child share the path: show the crumb once.
  const unique = trail.filter((crumb, index) => trail.findIndex((other) => other.path === crumb.path) === index);
  return (
    <Breadcrumbs
      aria-label={t("nav.breadcrumbs")}
      separator={<NavigateNext sx={{ fontSize: 16 }} />}
      sx={{ mb: 1, fontSize: "0.8125rem", "& .MuiBreadcrumbs-separator": { mx: 0.5, color: "text.disabled" } }}
    >
      <TextLink to="/" underline="hover" color="text.secondary">
        {t("nav.home")}
      </TextLink>
      {unique.map((crumb, index) =>
        index === unique.length - 1 ? (
          <Typography
            key={crumb.path}
            aria-current="page"
            sx={{ fontSize: "inherit", color: "text.primary", fontWeight: 500 }}
          >
            {crumb.object ? (
              <ObjectName kind={crumb.object} params={crumb.params} />
            ) : crumb.label ? (
              t(crumb.label)
            ) : null}
          </Typography>
        ) : (
          <TextLink key={crumb.path} to={crumb.path as "/"} underline="hover" color="text.secondary">
            {crumb.object ? (
              <ObjectName kind={crumb.object} params={crumb.params} />
            ) : crumb.label ? (
              t(crumb.label)
            ) : null}
          </TextLink>
        ),
      )}
    </Breadcrumbs>
  );
}
