import { assignWaves, MAX_WAVES, type ReleasePolicy, type WaveCandidate } from "@flotilla/domain";
import AddIcon from "@mui/icons-material/Add";
import ArrowDownward from "@mui/icons-material/ArrowDownward";
import ArrowUpward from "@mui/icons-material/ArrowUpward";
import DeleteOutline from "@mui/icons-material/DeleteOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import Divider from "@mui/material/Divider";
import FormControlLabel from "@mui/material/FormControlLabel";
import IconButton from "@mui/material/IconButton";
import InputAdornment from "@mui/material/InputAdornment";
import MenuItem from "@mui/material/MenuItem";
import Paper from "@mui/material/Paper";
import Switch from "@mui/material/Switch";
import TextField from "@mui/material/TextField";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { errorText } from "../../lib/errors.ts";
import { showToast } from "../../lib/toasts.ts";
import type { Fleet } from "../fleet-access/data.ts";
import { pineOf } from "../orgs/data.ts";
import { useReleasePolicy, useSaveReleasePolicy } from "./data.ts";
import { NEW_WAVE, type PolicyForm, policyForm, type SizeKind, validatePolicy, type WaveForm } from "./model.ts";

type PreviewDevice = WaveCandidate & { name: string };

/** The fleet's unpinned devices with their tags: what a rollout would split into waves. */
function usePreviewDevices(fleetId: number) {
  const sdk = useSdk();
  return useQuery({
    queryKey: ["fleet", fleetId, "rollout-preview-devices"],
    queryFn: async () => {
      const rows = await pineOf(sdk).get<
        Array<{
          id: number;
          uuid: string;
          device_name: string;
          is_pinned_on__release: { __id: number } | null;
          device_tag: Array<{ tag_key: string; value: string }>;
        }>
      >({
        resource: "device",
        options: {
          $select: ["id", "uuid", "device_name", "is_pinned_on__release"],
          $filter: { belongs_to__application: fleetId },
          $expand: { device_tag: { $select: ["tag_key", "value"] } },
          $orderby: { device_name: "asc" },
        },
      });
      return rows
        .filter((row) => row.is_pinned_on__release === null)
        .map(
          (row): PreviewDevice => ({
            id: row.id,
            uuid: row.uuid,
            name: row.device_name,
            tags: Object.fromEntries(row.device_tag.map((tag) => [tag.tag_key, tag.value])),
          }),
        );
    },
  });
}

const PREVIEW_NAMES = 12;

function WavePreview({ fleetId, policy }: { fleetId: number; policy: ReleasePolicy | undefined }) {
  const { t } = useTranslation();
  const devices = usePreviewDevices(fleetId);
  const waves = useMemo(() => {
    if (!policy || !devices.data) return undefined;
    const assigned = assignWaves(policy, fleetId, devices.data);
    return policy.waves.map((wave, index) => ({
      name: wave.name || t("rollouts.wave_number", { number: index + 1 }),
      devices: devices.data.filter((device) => assigned.get(device.id) === index),
    }));
  }, [policy, devices.data, fleetId, t]);
  return (
    <Box component="section" aria-label={t("rollouts.policy.preview")}>
      <Typography variant="subtitle2" component="h3" sx={{ fontWeight: 600 }}>
        {t("rollouts.policy.preview")}
      </Typography>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1.5 }}>
        {t("rollouts.policy.preview_text", { count: devices.data?.length ?? 0 })}
      </Typography>
      {devices.isError ? <Alert severity="error">{errorText(devices.error)}</Alert> : null}
      {!policy ? (
        <Typography variant="body2" color="text.secondary">
          {t("rollouts.policy.preview_invalid")}
        </Typography>
      ) : null}
      {waves?.map((wave, index) => (
        <Box
          // biome-ignore lint/suspicious/noArrayIndexKey: a wave's place is its identity.
          key={index}
          data-testid={`preview-wave-${index + 1}`}
          sx={{
            display: "flex",
            gap: 2,
            alignItems: "baseline",
            py: 0.75,
            borderTop: index ? 1 : 0,
            borderColor: "divider",
          }}
        >
          <Typography variant="body2" sx={{ fontWeight: 600, minWidth: 140 }}>
            {index + 1}. {wave.name}
          </Typography>
          <Typography variant="body2" sx={{ minWidth: 90 }}>
            {t("rollouts.device_count", { count: wave.devices.length })}
          </Typography>
          <Box sx={{ display: "flex", flexWrap: "wrap", gap: 0.5, flex: 1 }}>
            {wave.devices.slice(0, PREVIEW_NAMES).map((device) => (
              <Chip key={device.id} size="small" variant="outlined" label={device.name} />
            ))}
            {wave.devices.length > PREVIEW_NAMES ? (
              <Typography variant="body2" color="text.secondary">
                {t("rollouts.policy.and_more", { count: wave.devices.length - PREVIEW_NAMES })}
              </Typography>
            ) : null}
          </Box>
        </Box>
      ))}
    </Box>
  );
}

function WaveEditor(props: {
  index: number;
  count: number;
  wave: WaveForm;
  disabled: boolean;
  onChange: (wave: WaveForm) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  const { t } = useTranslation();
  const { wave, index, disabled } = props;
  const set = (patch: Partial<WaveForm>) => props.onChange({ ...wave, ...patch });
  const label = t("rollouts.wave_number", { number: index + 1 });
  return (
    <Paper
      variant="outlined"
      component="fieldset"
      aria-label={label}
      sx={{ p: 2, m: 0, minWidth: 0 }}
      disabled={disabled}
    >
      <Box sx={{ display: "flex", alignItems: "center", gap: 1, mb: 1.5 }}>
        <Typography variant="subtitle2" component="legend" sx={{ fontWeight: 600, float: "left", mr: 1 }}>
          {label}
        </Typography>
        <TextField
          size="small"
          label={t("rollouts.policy.wave_name")}
          value={wave.name}
          disabled={disabled}
          onChange={(event) => set({ name: event.target.value })}
          sx={{ flex: 1, maxWidth: 260 }}
        />
        <Box sx={{ flex: 1 }} />
        <Tooltip title={t("rollouts.policy.move_up")}>
          <span>
            <IconButton
              size="small"
              aria-label={t("rollouts.policy.move_up")}
              disabled={disabled || index === 0}
              onClick={() => props.onMove(-1)}
            >
              <ArrowUpward fontSize="small" />
            </IconButton>
          </span>
        </Tooltip>
        <Tooltip title={t("rollouts.policy.move_down")}>
          <span>
            <IconButton
              size="small"
              aria-label={t("rollouts.policy.move_down")}
              disabled={disabled || index === props.count - 1}
              onClick={() => props.onMove(1)}
            >
              <ArrowDownward fontSize="small" />
            </IconButton>
          </span>
        </Tooltip>
        <Tooltip title={t("rollouts.policy.remove_wave")}>
          <span>
            <IconButton
              size="small"
              aria-label={t("rollouts.policy.remove_wave")}
              disabled={disabled || props.count === 1}
              onClick={props.onRemove}
            >
              <DeleteOutline fontSize="small" />
            </IconButton>
          </span>
        </Tooltip>
      </Box>
      <Box sx={{ display: "grid", gridTemplateColumns: { xs: "1fr", md: "repeat(3, minmax(0, 1fr))" }, gap: 1.5 }}>
        <TextField
          select
          size="small"
          label={t("rollouts.policy.selector")}
          value={wave.selector}
          disabled={disabled}
          onChange={(event) => set({ selector: event.target.value as WaveForm["selector"] })}
        >
          <MenuItem value="tag">{t("rollouts.policy.selector_tag")}</MenuItem>
          <MenuItem value="devices">{t("rollouts.policy.selector_devices")}</MenuItem>
          <MenuItem value="share">{t("rollouts.policy.selector_share")}</MenuItem>
        </TextField>
        {wave.selector === "tag" ? (
          <>
            <TextField
              size="small"
              label={t("rollouts.policy.tag_key")}
              value={wave.tagKey}
              disabled={disabled}
              onChange={(event) => set({ tagKey: event.target.value })}
            />
            <TextField
              size="small"
              label={t("rollouts.policy.tag_value")}
              helperText={t("rollouts.policy.tag_value_help")}
              value={wave.tagValue}
              disabled={disabled}
              onChange={(event) => set({ tagValue: event.target.value })}
            />
          </>
        ) : wave.selector === "devices" ? (
          <TextField
            size="small"
            multiline
            minRows={2}
            label={t("rollouts.policy.uuids")}
            helperText={t("rollouts.policy.uuids_help")}
            value={wave.uuids}
            disabled={disabled}
            onChange={(event) => set({ uuids: event.target.value })}
            sx={{ gridColumn: { md: "span 2" } }}
            slotProps={{ htmlInput: { spellCheck: false } }}
          />
        ) : (
          <Typography variant="body2" color="text.secondary" sx={{ gridColumn: { md: "span 2" }, alignSelf: "center" }}>
            {t("rollouts.policy.selector_share_text")}
          </Typography>
        )}
        <TextField
          select
          size="small"
          label={t("rollouts.policy.size")}
          value={wave.sizeKind}
          disabled={disabled}
          onChange={(event) => set({ sizeKind: event.target.value as SizeKind })}
        >
          <MenuItem value="all">{t("rollouts.policy.size_all")}</MenuItem>
          <MenuItem value="count">{t("rollouts.policy.size_count")}</MenuItem>
          <MenuItem value="percent">{t("rollouts.policy.size_percent")}</MenuItem>
        </TextField>
        {wave.sizeKind !== "all" ? (
          <TextField
            size="small"
            type="number"
            label={wave.sizeKind === "count" ? t("rollouts.policy.devices") : t("rollouts.policy.percent_of_fleet")}
            value={wave.size}
            disabled={disabled}
            onChange={(event) => set({ size: event.target.value })}
            slotProps={
              wave.sizeKind === "percent"
                ? { input: { endAdornment: <InputAdornment position="end">%</InputAdornment> } }
                : {}
            }
          />
        ) : (
          <Box />
        )}
        <TextField
          size="small"
          type="number"
          label={t("rollouts.policy.soak")}
          value={wave.soakSeconds}
          disabled={disabled}
          onChange={(event) => set({ soakSeconds: event.target.value })}
          slotProps={{ input: { endAdornment: <InputAdornment position="end">s</InputAdornment> } }}
        />
        <TextField
          size="small"
          type="number"
          label={t("rollouts.policy.healthy_share")}
          helperText={t("rollouts.policy.healthy_share_help")}
          value={wave.healthyPercent}
          disabled={disabled}
          onChange={(event) => set({ healthyPercent: event.target.value })}
          slotProps={{ input: { endAdornment: <InputAdornment position="end">%</InputAdornment> } }}
        />
        <TextField
          size="small"
          type="number"
          label={t("rollouts.policy.halt_ratio")}
          helperText={t("rollouts.policy.halt_ratio_help")}
          value={wave.haltPercent}
          disabled={disabled}
          onChange={(event) => set({ haltPercent: event.target.value })}
          slotProps={{ input: { endAdornment: <InputAdornment position="end">%</InputAdornment> } }}
        />
        <TextField
          size="small"
          type="number"
          label={t("rollouts.policy.timeout")}
          helperText={t("rollouts.policy.timeout_help")}
          value={wave.timeoutSeconds}
          disabled={disabled}
          onChange={(event) => set({ timeoutSeconds: event.target.value })}
          slotProps={{ input: { endAdornment: <InputAdornment position="end">s</InputAdornment> } }}
        />
      </Box>
    </Paper>
  );
}

/**
 * Fleet settings' "Release policy" (issue #23, docs/rollouts.md): waves with their selector,
 * size, soak and gates, rollback on halt, and a preview of which devices fall into which wave
 * (the domain's `assignWaves`, as the server assigns them). Read-only without release_policy.all.
 */
export function ReleasePolicySection({ fleet, canEdit }: { fleet: Fleet; canEdit: boolean }) {
  const { t } = useTranslation();
  const stored = useReleasePolicy(fleet.id);
  const save = useSaveReleasePolicy(fleet.id);
  const [form, setForm] = useState<PolicyForm>(() => policyForm(undefined));
  const [touched, setTouched] = useState(false);
  useEffect(() => {
    if (stored.isSuccess) {
      setForm(policyForm(stored.data));
      setTouched(false);
    }
  }, [stored.isSuccess, stored.data]);
  const validated = validatePolicy(form);
  const update = (next: PolicyForm) => {
    setForm(next);
    setTouched(true);
    save.reset();
  };
  const setWave = (index: number, wave: WaveForm) =>
    update({ ...form, waves: form.waves.map((w, i) => (i === index ? wave : w)) });
  const move = (index: number, by: -1 | 1) => {
    const waves = [...form.waves];
    const [wave] = waves.splice(index, 1);
    if (wave) waves.splice(index + by, 0, wave);
    update({ ...form, waves });
  };
  const submit = () => {
    if (!("policy" in validated)) return;
    save.mutate(
      { ...(stored.data ? { existing: stored.data.id } : {}), isEnabled: form.enabled, policy: validated.policy },
      {
        onSuccess: () => {
          setTouched(false);
          showToast("success", t("rollouts.policy.saved"));
        },
      },
    );
  };
  const disabled = !canEdit || save.isPending;
  return (
    <Paper variant="outlined" component="section" aria-label={t("rollouts.policy.title")} sx={{ mt: 3 }}>
      <Box sx={{ px: 2.5, pt: 2.5, pb: 1.5 }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600 }}>
          {t("rollouts.policy.title")}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5, maxWidth: 760 }}>
          {t("rollouts.policy.text")}
        </Typography>
        {!canEdit ? (
          <Alert severity="info" sx={{ mt: 1.5 }}>
            {t("rollouts.policy.read_only")}
          </Alert>
        ) : null}
        {stored.isError ? (
          <Alert severity="error" sx={{ mt: 1.5 }}>
            {errorText(stored.error)}
          </Alert>
        ) : null}
        <FormControlLabel
          sx={{ mt: 1 }}
          control={
            <Switch
              checked={form.enabled}
              disabled={disabled}
              onChange={(event) => update({ ...form, enabled: event.target.checked })}
            />
          }
          label={t("rollouts.policy.enabled")}
        />
        {!stored.data && stored.isSuccess ? (
          <Typography variant="body2" color="text.secondary">
            {t("rollouts.policy.none_yet")}
          </Typography>
        ) : null}
      </Box>
      <Divider />
      <Box sx={{ p: 2.5, display: "grid", gap: 1.5 }}>
        {form.waves.map((wave, index) => (
          <WaveEditor
            // biome-ignore lint/suspicious/noArrayIndexKey: waves have no identity of their own; their place is what they are.
            key={index}
            index={index}
            count={form.waves.length}
            wave={wave}
            disabled={disabled}
            onChange={(next) => setWave(index, next)}
            onMove={(by) => move(index, by)}
            onRemove={() => update({ ...form, waves: form.waves.filter((_, i) => i !== index) })}
          />
        ))}
        <Box sx={{ display: "flex", gap: 2, alignItems: "center", flexWrap: "wrap" }}>
          <Button
            startIcon={<AddIcon />}
            disabled={disabled || form.waves.length >= MAX_WAVES}
            onClick={() => update({ ...form, waves: [...form.waves, { ...NEW_WAVE }] })}
          >
            {t("rollouts.policy.add_wave")}
          </Button>
          <FormControlLabel
            control={
              <Switch
                checked={form.rollbackOnHalt}
                disabled={disabled}
                onChange={(event) => update({ ...form, rollbackOnHalt: event.target.checked })}
              />
            }
            label={t("rollouts.policy.rollback_on_halt")}
          />
        </Box>
        {"problem" in validated && touched ? <Alert severity="warning">{validated.problem}</Alert> : null}
        {save.error ? <Alert severity="error">{errorText(save.error)}</Alert> : null}
        <Box>
          <Button
            variant="contained"
            onClick={submit}
            disabled={!canEdit || !touched || !("policy" in validated)}
            loading={save.isPending}
          >
            {t("rollouts.policy.save")}
          </Button>
        </Box>
      </Box>
      <Divider />
      <Box sx={{ p: 2.5 }}>
        <WavePreview fleetId={fleet.id} policy={"policy" in validated ? validated.policy : undefined} />
      </Box>
    </Paper>
  );
}
