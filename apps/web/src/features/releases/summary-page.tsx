import { isMulticontainerRelease } from "@flotilla/domain";
import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DescriptionOutlined from "@mui/icons-material/DescriptionOutlined";
import DownloadOutlined from "@mui/icons-material/DownloadOutlined";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import IconButton from "@mui/material/IconButton";
import Stack from "@mui/material/Stack";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { type ReactNode, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ButtonLink } from "../../components/links.tsx";
import { PageHeader } from "../../components/page.tsx";
import { Facts } from "../../components/settings.tsx";
import { type TagRow, TagsDialog } from "../../components/tags-dialog.tsx";
import { formatBytes, formatDate, formatFullDate } from "../../lib/format.ts";
import { saveBlob } from "../../lib/save-blob.ts";
import { showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { classPath } from "../fleets/data.ts";
import { Card } from "../orgs/ui.tsx";
import { useReleaseRollouts } from "../rollouts/data.ts";
import { releaseName } from "../rollouts/model.ts";
import { ReleaseRolloutCard } from "../rollouts/rollout-cards.tsx";
import { releaseErrorText } from "./batch-dialogs.tsx";
import { BuildLogTerminal } from "./build-log.tsx";
import { compositionYaml } from "./composition.ts";
import {
  type Release,
  type ReleaseImage,
  tagChanges,
  usePageRelease,
  useReleaseRefresh,
  writeReleaseTags,
} from "./data.ts";
import { buildDurationMs, formatDuration, type ReleaseAbilities, totalImageSize, versionText } from "./model.ts";
import { ReleaseFlags, ReleaseStatus } from "./release-status.tsx";
import { AssetsTree, FileDialog } from "./viewers.tsx";

const mono = (text: string) => (
  <Box component="span" sx={{ fontFamily: MONO_FONT_STACK, fontSize: 13 }}>
    {text}
  </Box>
);

function CopyButton({ text, label }: { text: string; label: string }) {
  const { t } = useTranslation();
  return (
    <Tooltip title={label}>
      <IconButton
        size="small"
        aria-label={label}
        sx={{ ml: 0.5, p: 0.25 }}
        onClick={() =>
          void navigator.clipboard?.writeText(text).then(
            () => showToast("success", t("releases.viewer.copied")),
            () => undefined,
          )
        }
      >
        <ContentCopyOutlined sx={{ fontSize: 15 }} />
      </IconButton>
    </Tooltip>
  );
}

const imagesOf = (release: Release): Array<ReleaseImage & { service: string }> =>
  release.release_image
    .flatMap((link) => link.image)
    .map((image) => ({ ...image, service: image.is_a_build_of__service[0]?.service_name ?? "—" }))
    .sort((a, b) => a.service.localeCompare(b.service));

function ReleaseCard({ release }: { release: Release }) {
  const { t } = useTranslation();
  // A rollout of this release that halted or was aborted leaves the devices it did not reach on the previous one.
  const rollout = useReleaseRollouts(release.id).data?.[0];
  const stopped = rollout?.is_in_effect && (rollout.status === "halted" || rollout.status === "aborted");
  // Deployment: whether the fleet targets the release, how many devices run it or are pinned to it.
  const deployment = [
    release.should_be_running_on__application > 0
      ? stopped
        ? t(`releases.deployment.fleet_target_${rollout.status as "halted" | "aborted"}`, {
            previous: releaseName(rollout.from__release[0]),
          })
        : t("releases.deployment.fleet_target")
      : null,
    t("releases.deployment.running_on", { count: release.is_running_on__device }),
    release.should_be_running_on__device > 0
      ? t("releases.deployment.pinned", { count: release.should_be_running_on__device })
      : null,
  ]
    .filter((part) => part !== null)
    .join(" · ");
  const duration = buildDurationMs(release);
  const size = totalImageSize(release.release_image.flatMap((link) => link.image));
  const rows: Array<[string, ReactNode]> = [
    [t("releases.fields.status"), <ReleaseStatus key="status" release={release} />],
    [t("releases.fields.version"), mono(versionText(release))],
    [t("releases.fields.deployment"), deployment],
    [
      t("releases.fields.validity"),
      release.is_invalidated ? (
        <Typography key="validity" component="span" variant="body2" color="error.main" sx={{ fontWeight: 500 }}>
          {t("releases.invalidated")}
        </Typography>
      ) : (
        t("releases.valid")
      ),
    ],
    [
      t("releases.fields.finalized"),
      release.is_final
        ? release.is_finalized_at__date
          ? t("releases.final_since", { date: formatDate(release.is_finalized_at__date) })
          : t("releases.final")
        : t("releases.draft_text"),
    ],
    [
      t("releases.fields.commit"),
      <Box key="commit" component="span" sx={{ display: "inline-flex", alignItems: "center" }}>
        {mono(release.commit)}
        <CopyButton text={release.commit} label={t("releases.copy_commit")} />
      </Box>,
    ],
    [t("releases.fields.author"), release.is_created_by__user[0]?.username ?? "—"],
    [
      t("releases.fields.created"),
      <span key="created" title={formatFullDate(release.created_at)}>
        {formatDate(release.created_at)}
      </span>,
    ],
    [t("releases.fields.build_duration"), duration === undefined ? "—" : formatDuration(duration)],
    [t("releases.fields.image_size"), size === undefined ? "—" : formatBytes(size)],
  ];
  return (
    <Card title={t("releases.card")}>
      <Facts rows={rows} />
    </Card>
  );
}

function ServicesCard({ release, abilities }: { release: Release; abilities: ReleaseAbilities }) {
  const { t } = useTranslation();
  const [dockerfile, setDockerfile] = useState<{ service: string; text: string | undefined }>();
  const [compose, setCompose] = useState(false);
  const images = imagesOf(release);
  let composeText: string | undefined;
  let composeError: string | undefined;
  try {
    composeText = compositionYaml(release.composition);
  } catch {
    composeError = t("errors.could_not_parse_composition_data");
  }
  return (
    <Card
      title={t("releases.services.title", { count: images.length })}
      action={
        <>
          {isMulticontainerRelease(images.length) ? (
            <Chip size="small" variant="outlined" label={t("releases.multicontainer")} />
          ) : null}
          {abilities.readOnly ? null : (
            <Button size="small" startIcon={<DescriptionOutlined />} onClick={() => setCompose(true)}>
              {t("releases.services.compose")}
            </Button>
          )}
        </>
      }
    >
      {images.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {t("releases.services.none")}
        </Typography>
      ) : (
        <Table size="small" aria-label={t("releases.services.table")}>
          <TableHead>
            <TableRow>
              <TableCell>{t("releases.services.service")}</TableCell>
              <TableCell>{t("releases.services.image")}</TableCell>
              <TableCell>{t("releases.services.status")}</TableCell>
              <TableCell align="right">{t("releases.services.size")}</TableCell>
              <TableCell align="right">{t("releases.services.dockerfile")}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {images.map((image) => (
              <TableRow key={image.id} sx={{ "&:last-child td": { borderBottom: 0 } }}>
                <TableCell sx={{ fontWeight: 600 }}>{image.service}</TableCell>
                <TableCell sx={{ maxWidth: 360 }}>
                  <Box
                    component="span"
                    title={image.is_stored_at__image_location}
                    sx={{
                      fontFamily: MONO_FONT_STACK,
                      fontSize: 12.5,
                      display: "block",
                      overflow: "hidden",
                      textOverflow: "ellipsis",
                      whiteSpace: "nowrap",
                    }}
                  >
                    {image.is_stored_at__image_location}
                  </Box>
                  {image.content_hash ? (
                    <Typography
                      variant="caption"
                      color="text.secondary"
                      title={image.content_hash}
                      aria-label={t("releases.services.digest", { digest: image.content_hash })}
                      sx={{ display: "block", fontFamily: MONO_FONT_STACK }}
                    >
                      {image.content_hash.slice(0, 19)}…
                    </Typography>
                  ) : null}
                  {image.error_message ? (
                    <Typography variant="caption" color="error.main" sx={{ display: "block" }}>
                      {image.error_message}
                    </Typography>
                  ) : null}
                </TableCell>
                <TableCell>
                  <ReleaseStatus release={{ status: image.status }} />
                </TableCell>
                <TableCell align="right" sx={{ fontVariantNumeric: "tabular-nums", whiteSpace: "nowrap" }}>
                  {image.image_size === null ? "—" : formatBytes(Number(image.image_size))}
                </TableCell>
                <TableCell align="right" sx={{ whiteSpace: "nowrap" }}>
                  <Button
                    size="small"
                    onClick={() => setDockerfile({ service: image.service, text: image.dockerfile ?? undefined })}
                    aria-label={t("releases.services.view_dockerfile", { service: image.service })}
                  >
                    {t("releases.services.view")}
                  </Button>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
      {dockerfile ? (
        <FileDialog
          title={t("releases.services.dockerfile_of", { service: dockerfile.service })}
          filename="Dockerfile"
          text={dockerfile.text || undefined}
          missing={t("errors.no_dockerfile_available")}
          onClose={() => setDockerfile(undefined)}
        />
      ) : null}
      {compose ? (
        <FileDialog
          title={t("releases.services.compose_title")}
          filename="docker-compose.yml"
          text={composeText}
          missing={t("releases.services.no_compose")}
          {...(composeError ? { error: composeError } : {})}
          onClose={() => setCompose(false)}
        />
      ) : null}
    </Card>
  );
}

/** Manage a release's tags: set and remove, 50 writes at a time (spec 2 §7). */
function ReleaseTagsDialog(props: {
  release: Release;
  fleetId: number;
  abilities: ReleaseAbilities;
  onClose: () => void;
}) {
  const sdk = useSdk();
  const refresh = useReleaseRefresh();
  const save = async (rows: TagRow[]) => {
    try {
      await writeReleaseTags(sdk, props.release.id, tagChanges(props.release.release_tag, rows));
    } finally {
      await refresh(props.fleetId, props.release.id);
    }
  };
  return (
    <TagsDialog
      texts="releases.tags"
      tags={props.release.release_tag}
      canRemove={props.abilities.removeTags}
      save={save}
      describeError={releaseErrorText}
      onClose={props.onClose}
    />
  );
}

function TextCard(props: { title: string; text: string | null; empty: string; edit?: ReactNode }) {
  return (
    <Card title={props.title} action={props.edit}>
      {props.text ? (
        <Typography variant="body2" sx={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
          {props.text}
        </Typography>
      ) : (
        <Typography variant="body2" color="text.secondary">
          {props.empty}
        </Typography>
      )}
    </Card>
  );
}

/**
 * `/{fleets|apps|blocks}/{id}/releases/{releaseId}` (spec 2 §2 "Release summary"): version,
 * deployment, validity and finalized state; known issues, notes, tags, author, commit; build
 * duration and image size; services with their Dockerfiles; assets; docker-compose; the build
 * log. Read-only users see no edit buttons, build log, compose or tags, and known issues only
 * when there are some.
 */
export function ReleaseSummaryPage() {
  const { t } = useTranslation();
  const { fleet, release, abilities } = usePageRelease();
  const [tagging, setTagging] = useState(false);
  if (!fleet || !release) return null;
  const settings = `${classPath(fleet.is_of__class)}/${fleet.id}/releases/${release.id}/settings`;
  const edit = abilities.update ? (
    <ButtonLink to={settings as "/"} size="small">
      {t("releases.edit")}
    </ButtonLink>
  ) : undefined;
  const running = release.status === "running";
  return (
    <>
      <PageHeader
        title={t("releases.release_title", { version: versionText(release) })}
        description={t("releases.summary_description", { commit: release.commit.slice(0, 7), name: fleet.app_name })}
        actions={<ReleaseFlags release={release} />}
      />
      <Box sx={{ display: "grid", gap: 2, gridTemplateColumns: { xs: "1fr", lg: "1.3fr 1fr" }, alignItems: "start" }}>
        <ReleaseCard release={release} />
        <Stack spacing={2}>
          {fleet.is_of__class === "fleet" ? <ReleaseRolloutCard releaseId={release.id} fleetId={fleet.id} /> : null}
          {abilities.readOnly && !release.known_issue_list ? null : (
            <TextCard
              title={t("releases.known_issues")}
              text={release.known_issue_list}
              empty={t("releases.no_known_issues")}
              edit={edit}
            />
          )}
          <TextCard title={t("releases.notes")} text={release.note} empty={t("releases.no_notes")} edit={edit} />
          {abilities.readOnly ? null : (
            <Card
              title={t("releases.tags.title", { count: release.release_tag.length })}
              action={
                abilities.setTags ? (
                  <Button size="small" onClick={() => setTagging(true)}>
                    {t("releases.tags.manage")}
                  </Button>
                ) : undefined
              }
            >
              {release.release_tag.length === 0 ? (
                <Typography variant="body2" color="text.secondary">
                  {t("releases.tags.none")}
                </Typography>
              ) : (
                <Box sx={{ display: "flex", flexWrap: "wrap", gap: 1 }}>
                  {release.release_tag.map((tag) => (
                    <Chip key={tag.id} size="small" label={tag.value ? `${tag.tag_key}: ${tag.value}` : tag.tag_key} />
                  ))}
                </Box>
              )}
            </Card>
          )}
        </Stack>
        <Box sx={{ gridColumn: { lg: "1 / -1" } }}>
          <ServicesCard release={release} abilities={abilities} />
        </Box>
        <Box sx={{ gridColumn: { lg: "1 / -1" } }}>
          <Card title={t("releases.assets.title")}>
            <AssetsTree assets={release.release_asset} />
          </Card>
        </Box>
        {abilities.readOnly ? null : (
          <Box sx={{ gridColumn: { lg: "1 / -1" } }}>
            <Card
              title={t("releases.build_log.title")}
              action={
                release.build_log ? (
                  <Tooltip title={t("releases.build_log.download")}>
                    <IconButton
                      size="small"
                      aria-label={t("releases.build_log.download")}
                      onClick={() =>
                        saveBlob(
                          new Blob([release.build_log ?? ""], { type: "text/plain" }),
                          `build-${release.commit.slice(0, 7)}.log`,
                        )
                      }
                    >
                      <DownloadOutlined fontSize="small" />
                    </IconButton>
                  </Tooltip>
                ) : null
              }
            >
              <BuildLogTerminal log={release.build_log} running={running} />
            </Card>
          </Box>
        )}
      </Box>
      {tagging ? (
        <ReleaseTagsDialog
          release={release}
          fleetId={fleet.id}
          abilities={abilities}
          onClose={() => setTagging(false)}
        />
      ) : null}
    </>
  );
}
