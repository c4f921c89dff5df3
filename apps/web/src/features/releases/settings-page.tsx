import { isFailedTypeRelease, parseThreePartSemver, RELEASE_TEXT_DEBOUNCE_MS } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import FormControlLabel from "@mui/material/FormControlLabel";
import Paper from "@mui/material/Paper";
import Switch from "@mui/material/Switch";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { PageHeader } from "../../components/page.tsx";
import { ErrorNote, Setting, settingRow } from "../../components/settings.tsx";
import { formatDate } from "../../lib/format.ts";
import { showToast } from "../../lib/toasts.ts";
import { classPath } from "../fleets/data.ts";
import { pineOf } from "../orgs/data.ts";
import { releaseErrorText } from "./batch-dialogs.tsx";
import { deleteReleases, type Release, usePageRelease, useReleaseRefresh } from "./data.ts";
import { releaseLabel, semverText } from "./model.ts";

/** A release write: busy, its error in the release rules' words, then the release and lists refreshed. */
function useReleaseWrite(release: Release, fleetId: number) {
  const refresh = useReleaseRefresh();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async (write: () => Promise<unknown>, toast?: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await write();
      if (toast) showToast("success", toast);
      return true;
    } catch (caught) {
      setError(releaseErrorText(caught));
      return false;
    } finally {
      await refresh(fleetId, release.id);
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

function FinalizeSetting({ release, fleetId }: { release: Release; fleetId: number }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { busy, error, run } = useReleaseWrite(release, fleetId);
  const [confirming, setConfirming] = useState(false);
  return (
    <Setting title={t("releases.settings.finalize")} text={t("releases.settings.finalize_text")}>
      <ErrorNote error={confirming ? undefined : error} />
      {release.is_final ? (
        <Typography variant="body2" sx={{ fontWeight: 500 }} data-testid="release-final">
          {t("warnings.already_finalized")}
          {release.is_finalized_at__date
            ? ` ${t("releases.settings.finalized_on", { date: formatDate(release.is_finalized_at__date) })}`
            : ""}
        </Typography>
      ) : (
        <Button variant="outlined" onClick={() => setConfirming(true)}>
          {t("releases.settings.finalize")}
        </Button>
      )}
      <ConfirmDialog
        open={confirming}
        title={t("releases.settings.finalize_title")}
        text={t("warnings.will_not_be_able_to_unfinalize")}
        items={[releaseLabel(release)]}
        confirmLabel={t("releases.settings.finalize")}
        busy={busy}
        {...(error ? { error } : {})}
        onConfirm={() =>
          void run(
            () => pineOf(sdk).patch({ resource: "release", id: release.id, body: { is_final: true } }),
            t("releases.settings.finalized"),
          ).then((ok) => ok && setConfirming(false))
        }
        onClose={() => setConfirming(false)}
      />
    </Setting>
  );
}

function ValiditySetting({ release, fleetId }: { release: Release; fleetId: number }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { busy, error, run } = useReleaseWrite(release, fleetId);
  const [confirming, setConfirming] = useState(false);
  const failedType = isFailedTypeRelease(release.status);
  const cannotValidate = release.is_invalidated && failedType;
  const setInvalidated = (invalidated: boolean) =>
    run(
      () => sdk.models.release.setIsInvalidated(release.id, invalidated),
      invalidated ? t("releases.settings.invalidated") : t("releases.settings.validated"),
    );
  return (
    <Setting title={t("releases.settings.validity")} text={t("releases.settings.validity_text")}>
      <ErrorNote error={confirming ? undefined : error} />
      {cannotValidate ? (
        <Alert severity="info" sx={{ mb: 1.5 }}>
          {t("warnings.cannot_validate_failed_releases")}
        </Alert>
      ) : null}
      <FormControlLabel
        control={
          <Switch
            checked={!release.is_invalidated}
            disabled={busy || cannotValidate}
            onChange={(event) => {
              if (event.target.checked) void setInvalidated(false);
              else setConfirming(true);
            }}
          />
        }
        label={release.is_invalidated ? t("releases.invalidated") : t("releases.valid")}
      />
      <ConfirmDialog
        open={confirming}
        danger
        title={t("releases.settings.invalidate_title")}
        text={t("warnings.invalidating_will_update_unpinned_devices")}
        items={[releaseLabel(release)]}
        confirmLabel={t("releases.settings.invalidate")}
        busy={busy}
        {...(error ? { error } : {})}
        onConfirm={() => void setInvalidated(true).then((ok) => ok && setConfirming(false))}
        onClose={() => setConfirming(false)}
      />
    </Setting>
  );
}

function VersionSetting({ release, fleetId }: { release: Release; fleetId: number }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { busy, error, run } = useReleaseWrite(release, fleetId);
  const current = semverText(release);
  const [text, setText] = useState(current);
  useEffect(() => setText(current), [current]);
  const parsed = parseThreePartSemver(text);
  const invalid = text.trim() !== "" && parsed === undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!parsed || text.trim() === current) return;
    void run(
      () =>
        pineOf(sdk).patch({
          resource: "release",
          id: release.id,
          body: { semver_major: parsed.major, semver_minor: parsed.minor, semver_patch: parsed.patch },
        }),
      t("releases.settings.version_saved"),
    );
  };
  return (
    <Setting title={t("releases.settings.version")} text={t("releases.settings.version_text")}>
      <ErrorNote error={error} />
      <Box component="form" noValidate onSubmit={submit} sx={settingRow}>
        <TextField
          size="small"
          fullWidth
          label={t("releases.settings.version")}
          value={text}
          onChange={(event) => setText(event.target.value)}
          error={invalid}
          helperText={invalid ? t("releases.errors.version_invalid") : t("releases.settings.version_help")}
          slotProps={{ htmlInput: { spellCheck: false, autoComplete: "off", inputMode: "decimal" } }}
        />
        <Button type="submit" variant="outlined" loading={busy} disabled={!parsed || text.trim() === current}>
          {t("releases.settings.save")}
        </Button>
      </Box>
    </Setting>
  );
}

/**
 * A text of the release saved 500 ms after the last keystroke (spec 2 §9): known issues, note.
 * The field keeps the user's text; a failed save says so and keeps it for the next try.
 */
function DebouncedTextSetting(props: {
  release: Release;
  fleetId: number;
  title: string;
  text: string;
  label: string;
  value: string | null;
  save: (value: string | null) => Promise<unknown>;
}) {
  const { t } = useTranslation();
  const { error, run } = useReleaseWrite(props.release, props.fleetId);
  const [text, setText] = useState(props.value ?? "");
  const [state, setState] = useState<"idle" | "pending" | "saving" | "saved">("idle");
  const saved = useRef(props.value ?? "");
  const save = useRef(props.save);
  save.current = props.save;
  // biome-ignore lint/correctness/useExhaustiveDependencies: run changes identity every render; the timer follows the text only
  useEffect(() => {
    if (text === saved.current) return;
    setState("pending");
    const timer = setTimeout(() => {
      setState("saving");
      const value = text.trim() === "" ? null : text;
      void run(() => save.current(value)).then((ok) => {
        if (ok) saved.current = text;
        setState(ok ? "saved" : "idle");
      });
    }, RELEASE_TEXT_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text]);
  return (
    <Setting title={props.title} text={props.text}>
      <ErrorNote error={error} />
      <TextField
        multiline
        minRows={3}
        maxRows={12}
        fullWidth
        label={props.label}
        value={text}
        onChange={(event) => setText(event.target.value)}
        helperText={
          state === "pending" || state === "saving"
            ? t("releases.settings.saving")
            : state === "saved"
              ? t("releases.settings.saved")
              : t("releases.settings.autosave")
        }
      />
    </Setting>
  );
}

function DeleteSetting({ release, fleetId, prefix }: { release: Release; fleetId: number; prefix: string }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const navigate = useNavigate();
  const { busy, error, run } = useReleaseWrite(release, fleetId);
  const [confirming, setConfirming] = useState(false);
  return (
    <Setting title={t("releases.settings.delete")} text={t("releases.settings.delete_text")}>
      <ErrorNote error={confirming ? undefined : error} />
      <Button variant="outlined" color="error" onClick={() => setConfirming(true)}>
        {t("releases.settings.delete")}
      </Button>
      <ConfirmDialog
        open={confirming}
        danger
        title={t("releases.settings.delete_title")}
        text={t("releases.batch.delete_text")}
        items={[releaseLabel(release)]}
        confirmLabel={t("releases.settings.delete")}
        busy={busy}
        {...(error ? { error } : {})}
        onConfirm={() =>
          void run(() => deleteReleases(sdk, [release.id]), t("releases.batch.deleted", { count: 1 })).then((ok) => {
            if (!ok) return;
            setConfirming(false);
            void navigate({ to: `${prefix}/releases` as "/", replace: true });
          })
        }
        onClose={() => setConfirming(false)}
      />
    </Setting>
  );
}

/**
 * `/…/releases/{releaseId}/settings` (spec 2 §2, §4 "Release rules", §7): finalize (one way),
 * validity, the three-part version, known issues and note (saved as you type), delete. Needs
 * resin.release.update (the route sends others to `/`).
 */
export function ReleaseSettingsPage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const navigate = useNavigate();
  const { fleet, release, abilities } = usePageRelease();
  const refused = fleet !== undefined && !abilities.update;
  useEffect(() => {
    if (refused) void navigate({ to: "/", replace: true });
  }, [refused, navigate]);
  if (!fleet || !release || refused) return null;
  const prefix = `${classPath(fleet.is_of__class)}/${fleet.id}`;
  return (
    <>
      <PageHeader
        title={t("releases.settings.title")}
        description={t("releases.settings.description", { release: releaseLabel(release) })}
      />
      <Paper variant="outlined" component="section" aria-label={t("releases.settings.title")} sx={{ mb: 3 }}>
        <FinalizeSetting release={release} fleetId={fleet.id} />
        <ValiditySetting release={release} fleetId={fleet.id} />
        <VersionSetting release={release} fleetId={fleet.id} />
        <DebouncedTextSetting
          release={release}
          fleetId={fleet.id}
          title={t("releases.known_issues")}
          text={t("releases.settings.known_issues_text")}
          label={t("releases.known_issues")}
          value={release.known_issue_list}
          save={(value) => sdk.models.release.setKnownIssueList(release.id, value)}
        />
        <DebouncedTextSetting
          release={release}
          fleetId={fleet.id}
          title={t("releases.notes")}
          text={t("releases.settings.note_text")}
          label={t("releases.notes")}
          value={release.note}
          save={(value) => sdk.models.release.setNote(release.id, value)}
        />
      </Paper>
      {abilities.delete ? (
        <Paper
          variant="outlined"
          sx={{ borderColor: "error.light" }}
          component="section"
          aria-label={t("releases.settings.danger")}
        >
          <DeleteSetting release={release} fleetId={fleet.id} prefix={prefix} />
        </Paper>
      ) : null}
    </>
  );
}
