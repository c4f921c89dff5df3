import { isFailedTypeRelease } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { errorText } from "../../lib/errors.ts";
import { t as translate } from "../../lib/i18n.ts";
import { showToast } from "../../lib/toasts.ts";
import { batchReport, failureMessage, runBatch } from "../devices/batch.ts";
import { pineOf } from "../orgs/data.ts";
import { deleteReleases, useReleaseRefresh } from "./data.ts";
import { releaseErrorKey, releaseLabel } from "./model.ts";

/** The text of a failed release write: the release rule's text when the server named one, else the usual text. */
export function releaseErrorText(error: unknown): string {
  const key = releaseErrorKey(error);
  return key ? translate(key) : errorText(error);
}

export type ReleaseBatchAction = "finalize" | "invalidate" | "validate" | "delete";

export interface BatchRelease {
  id: number;
  commit: string;
  raw_version: string;
  status: string;
  is_final: boolean;
  is_invalidated: boolean;
}

/** Which of the chosen releases an action applies to, and why the others are left out. */
export function batchTargets(action: ReleaseBatchAction, releases: readonly BatchRelease[]) {
  switch (action) {
    case "finalize":
      return { targets: releases.filter((r) => !r.is_final), skipped: releases.filter((r) => r.is_final) };
    case "invalidate":
      return {
        targets: releases.filter((r) => !r.is_invalidated),
        skipped: releases.filter((r) => r.is_invalidated),
      };
    case "validate":
      return {
        targets: releases.filter((r) => r.is_invalidated && !isFailedTypeRelease(r.status)),
        skipped: releases.filter((r) => !r.is_invalidated || isFailedTypeRelease(r.status)),
      };
    case "delete":
      return { targets: [...releases], skipped: [] };
  }
}

/**
 * Batch actions of the releases list (spec 2 §2, §4, §7): finalize (warns that it is one way),
 * invalidate (warns that unpinned devices update), validate (not for failed or cancelled
 * releases), delete (one request by id list; refused while a fleet or device points at one).
 */
export function ReleaseBatchDialog(props: {
  action: ReleaseBatchAction;
  fleetId: number;
  releases: readonly BatchRelease[];
  onClose: () => void;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const refresh = useReleaseRefresh();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const { targets, skipped } = batchTargets(props.action, props.releases);
  const failedTypes = props.action === "validate" && skipped.some((r) => isFailedTypeRelease(r.status));
  const allFinal = props.action === "finalize" && targets.length === 0;
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      if (props.action === "delete") {
        await deleteReleases(
          sdk,
          targets.map((r) => r.id),
        );
        showToast("success", t("releases.batch.deleted", { count: targets.length }));
      } else {
        const body =
          props.action === "finalize" ? { is_final: true } : { is_invalidated: props.action === "invalidate" };
        const result = await runBatch(
          targets.map((r) => r.id),
          (id) => pineOf(sdk).patch({ resource: "release", id, body }),
        );
        const outcome = batchReport(result, releaseErrorText);
        if (outcome.severity === "error" || outcome.severity === "locked") {
          setError(failureMessage(result.failed, releaseErrorText));
          await refresh(props.fleetId);
          return;
        }
        if (outcome.severity === "warning") {
          showToast("warning", t("devices.batch.partial", { count: outcome.failedCount, message: outcome.message }));
        } else if (outcome.severity === "success") {
          showToast("success", t(`releases.batch.${props.action}_done`, { count: targets.length }));
        }
      }
      await refresh(props.fleetId);
      props.onDone();
      props.onClose();
    } catch (caught) {
      setError(releaseErrorText(caught));
    } finally {
      setBusy(false);
    }
  };
  const text =
    props.action === "finalize"
      ? t("warnings.will_not_be_able_to_unfinalize")
      : props.action === "invalidate"
        ? t("warnings.invalidating_will_update_unpinned_devices")
        : props.action === "delete"
          ? t("releases.batch.delete_text")
          : t("releases.batch.validate_text");
  return (
    <ConfirmDialog
      open
      danger={props.action === "delete" || props.action === "invalidate"}
      title={t(`releases.batch.${props.action}_title`, { count: targets.length })}
      text={text}
      items={targets.map(releaseLabel)}
      confirmLabel={t(`releases.batch.${props.action}`)}
      confirmDisabled={targets.length === 0}
      busy={busy}
      {...(error ? { error } : {})}
      onConfirm={() => void run()}
      onClose={props.onClose}
    >
      {allFinal ? <Alert severity="info">{t("warnings.already_finalized")}</Alert> : null}
      {failedTypes ? <Alert severity="info">{t("warnings.cannot_validate_failed_releases")}</Alert> : null}
    </ConfirmDialog>
  );
}
