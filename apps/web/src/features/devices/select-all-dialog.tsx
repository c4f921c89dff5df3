import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import LinearProgress from "@mui/material/LinearProgress";
import Typography from "@mui/material/Typography";
import { useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { errorText } from "../../lib/errors.ts";
import type { Sdk } from "../../lib/sdk.ts";
import { useApplicationList } from "../fleets/data.ts";
import { fleetCan, fleetRoleOf } from "../orgs/access.ts";
import { ReleasePicker, TRACK_FLEET } from "../releases/release-picker.tsx";
import { MoveTargetField, TAG_CONCURRENCY, TagFields } from "./actions.tsx";
import { type BatchReport, type BatchResult, batchReport } from "./batch.ts";
import { deviceListFilter } from "./data.ts";
import {
  createNewTags,
  idPageFilter,
  type MatchingAction,
  type PagedProgress,
  progressPercent,
  runPagedBatch,
  splitTagWrites,
  storedIdPageSize,
  wholePage,
} from "./select-all.ts";

/** Pine with the `$filter`-addressed PATCH and DELETE the server supports (apps/server/src/odata). */
interface FilterPine {
  get<T>(params: { resource: string; options: Record<string, unknown> }): Promise<T>;
  post(params: { resource: string; body: Record<string, unknown> }): Promise<unknown>;
  request(params: { method: "POST"; url: string; body: unknown }): Promise<unknown>;
  patch(params: {
    resource: string;
    options: Record<string, unknown>;
    body: Record<string, unknown>;
  }): Promise<unknown>;
  delete(params: { resource: string; options: Record<string, unknown> }): Promise<unknown>;
}
const pine = (sdk: Sdk) => sdk.pine as unknown as FilterPine;

type Choice =
  | { action: "move"; fleet: number }
  | { action: "tag"; key: string; value: string }
  | { action: "pin"; release: string }
  | { action: "delete" };

/** One page of the action: one PATCH or DELETE over `id in (…)` where the data allows it. */
function pageAction(sdk: Sdk, choice: Choice): (ids: number[]) => Promise<BatchResult<number>> {
  const byIds = (ids: number[]) => ({ $filter: { id: { $in: ids } } });
  switch (choice.action) {
    case "move":
      // The server checks the target's architecture and the mover's role (settings-hooks.ts).
      return (ids) =>
        wholePage(ids, () =>
          pine(sdk).patch({ resource: "device", options: byIds(ids), body: { belongs_to__application: choice.fleet } }),
        );
    case "pin": {
      const release = choice.release === TRACK_FLEET ? null : Number(choice.release);
      return (ids) =>
        wholePage(ids, () =>
          pine(sdk).patch({ resource: "device", options: byIds(ids), body: { is_pinned_on__release: release } }),
        );
    }
    case "delete":
      return (ids) => wholePage(ids, () => pine(sdk).delete({ resource: "device", options: byIds(ids) }));
    case "tag":
      // A tag row is unique per device and key: existing ones change in one PATCH, new ones are
      // one $batch (spec 2 §9); when the server refuses that as a whole, a POST per device (50 at
      // a time) tells which devices are refused.
      return async (ids) => {
        const where = (devices: number[]) => ({ device: { $in: devices }, tag_key: choice.key });
        let tagged: Array<{ device: { __id: number } }>;
        try {
          tagged = await pine(sdk).get({ resource: "device_tag", options: { $select: "device", $filter: where(ids) } });
        } catch (error) {
          return { succeeded: [], failed: ids.map((item) => ({ item, error })) };
        }
        const { update, create } = splitTagWrites(
          ids,
          tagged.map((row) => row.device.__id),
        );
        const updated =
          update.length > 0
            ? await wholePage(update, () =>
                pine(sdk).patch({
                  resource: "device_tag",
                  options: { $filter: where(update) },
                  body: { value: choice.value },
                }),
              )
            : { succeeded: [], failed: [] };
        const created = await createNewTags(pine(sdk), create, choice, TAG_CONCURRENCY);
        return {
          succeeded: [...updated.succeeded, ...created.succeeded],
          failed: [...updated.failed, ...created.failed],
        };
      };
  }
}

type Finished = { report: BatchReport<number>; done: number; cancelled: boolean; error?: string };

/**
 * A batch action over every device that matches the list's filter ("Select all N devices that
 * match"): the form, then the run in pages of 500 ids with progress and Cancel, then the spec's
 * batch report (spec 2 §4 "Batch actions").
 */
export function MatchingBatchDialog(props: {
  action: MatchingAction;
  fleetId: number;
  /** The fleet's CPU architecture: devices move only to fleets of the same one (spec 2 §6). */
  architecture: number | undefined;
  filter: string;
  total: number;
  onClose: () => void;
  onRemoved?: () => void;
}) {
  const { t, i18n } = useTranslation();
  const sdk = useSdk();
  const queryClient = useQueryClient();
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const [release, setRelease] = useState(TRACK_FLEET);
  const [target, setTarget] = useState("");
  const fleets = useApplicationList("fleet");
  const [progress, setProgress] = useState<PagedProgress>();
  const [finished, setFinished] = useState<Finished>();
  const [cancelling, setCancelling] = useState(false);
  const abort = useRef<AbortController>(undefined);
  const number = (n: number) => n.toLocaleString(i18n.language);
  const count = { count: props.total, total: number(props.total) };

  const start = async (choice: Choice) => {
    const controller = new AbortController();
    abort.current = controller;
    setProgress({ done: 0, total: props.total });
    const filter = deviceListFilter(props.fleetId, props.filter);
    const result = await runPagedBatch({
      total: props.total,
      pageSize: storedIdPageSize(),
      fetchPage: async (after, size) => {
        const rows = await pine(sdk).get<Array<{ id: number }>>({
          resource: "device",
          options: { $select: "id", $filter: idPageFilter(filter, after), $orderby: { id: "asc" }, $top: size },
        });
        return rows.map((row) => row.id);
      },
      applyPage: pageAction(sdk, choice),
      onProgress: setProgress,
      signal: controller.signal,
    });
    await queryClient.invalidateQueries({ queryKey: ["fleet-devices"] });
    await queryClient.invalidateQueries({ queryKey: ["device"] });
    // Devices that left the list take the selection with them.
    if ((choice.action === "delete" || choice.action === "move") && result.succeeded.length > 0) props.onRemoved?.();
    setFinished({
      report: batchReport(result),
      done: result.succeeded.length + result.failed.length,
      cancelled: result.cancelled,
      error: result.error === undefined ? undefined : errorText(result.error),
    });
  };

  if (finished) {
    const { report } = finished;
    return (
      <Dialog open onClose={props.onClose} maxWidth="xs" fullWidth>
        <DialogTitle>{t(`devices.batch.${props.action}`)}</DialogTitle>
        <DialogContent sx={{ display: "grid", gap: 1.5 }}>
          {report.severity === "success" ? (
            <Alert severity="success">
              {t("devices.all_matching.succeeded", { count: finished.done, total: number(finished.done) })}
            </Alert>
          ) : report.severity === "error" ? (
            <Alert severity="error">{report.message}</Alert>
          ) : report.severity === "warning" ? (
            <Alert severity="warning">
              {t("devices.batch.partial", { count: report.failedCount, message: report.message })}
            </Alert>
          ) : null}
          {finished.cancelled ? (
            <Alert severity="info">
              {t("devices.all_matching.cancelled", { done: number(finished.done), total: number(props.total) })}
            </Alert>
          ) : null}
          {finished.error ? <Alert severity="error">{finished.error}</Alert> : null}
        </DialogContent>
        <DialogActions>
          <Button variant="contained" onClick={props.onClose}>
            {t("form.close")}
          </Button>
        </DialogActions>
      </Dialog>
    );
  }

  if (progress) {
    return (
      <Dialog open maxWidth="xs" fullWidth>
        <DialogTitle>{t(`devices.batch.${props.action}`)}</DialogTitle>
        <DialogContent>
          <LinearProgress
            variant="determinate"
            value={progressPercent(progress)}
            aria-label={t("devices.all_matching.progress_label")}
            sx={{ height: 8, borderRadius: 4, my: 1 }}
          />
          <Typography variant="body2" color="text.secondary" role="status">
            {t("devices.all_matching.progress", { done: number(progress.done), total: number(progress.total) })}
          </Typography>
        </DialogContent>
        <DialogActions>
          <Button
            disabled={cancelling}
            onClick={() => {
              abort.current?.abort();
              setCancelling(true);
            }}
          >
            {cancelling ? t("devices.all_matching.cancelling") : t("confirm.cancel")}
          </Button>
        </DialogActions>
      </Dialog>
    );
  }

  const applies = t("devices.all_matching.applies", count);
  if (props.action === "delete") {
    return (
      <ConfirmDialog
        open
        danger
        title={t("devices.delete.title", { count: props.total })}
        text={`${applies} ${t("devices.delete.text")}`}
        confirmLabel={t("devices.delete.confirm")}
        confirmText={String(props.total)}
        onConfirm={() => void start({ action: "delete" })}
        onClose={props.onClose}
      />
    );
  }
  if (props.action === "move") {
    const candidates = (fleets.data ?? []).filter(
      (fleet) =>
        fleet.id !== props.fleetId &&
        fleet.is_for__device_type[0]?.is_of__cpu_architecture[0]?.id === props.architecture &&
        fleetCan(fleetRoleOf(fleet.user_access_roles.map((row) => row.role)), "device", "move"),
    );
    return (
      <ConfirmDialog
        open
        title={t("devices.move.title")}
        text={applies}
        confirmLabel={t("devices.move.confirm")}
        confirmDisabled={!target}
        onConfirm={() => void start({ action: "move", fleet: Number(target) })}
        onClose={props.onClose}
      >
        <Box sx={{ display: "grid", gap: 2 }}>
          <MoveTargetField loaded={Boolean(fleets.data)} candidates={candidates} value={target} onChange={setTarget} />
          <Alert severity="warning">{t("devices.move.pinned_warning")}</Alert>
        </Box>
      </ConfirmDialog>
    );
  }
  if (props.action === "pin") {
    return (
      <ConfirmDialog
        open
        title={t("devices.pin.title")}
        text={applies}
        confirmLabel={t("devices.pin.confirm")}
        onConfirm={() => void start({ action: "pin", release })}
        onClose={props.onClose}
      >
        <ReleasePicker
          fleetId={props.fleetId}
          kind="device"
          label={t("devices.pin.release")}
          value={release}
          onChange={setRelease}
        />
      </ConfirmDialog>
    );
  }
  return (
    <ConfirmDialog
      open
      title={t("devices.tags.add_title")}
      text={applies}
      confirmLabel={t("devices.tags.save")}
      confirmDisabled={!key.trim()}
      onConfirm={() => void start({ action: "tag", key: key.trim(), value })}
      onClose={props.onClose}
    >
      <TagFields tagKey={key} value={value} onKey={setKey} onValue={setValue} />
    </ConfirmDialog>
  );
}
