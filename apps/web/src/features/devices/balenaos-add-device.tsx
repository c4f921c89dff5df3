import { BALENAOS_DOWNLOAD_PAGE, deviceTypeInstructions, osImageFileName } from "@flotilla/domain";
import CheckCircleOutlined from "@mui/icons-material/CheckCircleOutlined";
import Alert from "@mui/material/Alert";
import AlertTitle from "@mui/material/AlertTitle";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import Link from "@mui/material/Link";
import Stack from "@mui/material/Stack";
import Typography from "@mui/material/Typography";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import { useSdk, useServices } from "../../app-services.tsx";
import { CommandBlock } from "../../components/command-block.tsx";
import { errorText } from "../../lib/errors.ts";
import { formatBytes } from "../../lib/format.ts";
import { saveBlob } from "../../lib/save-blob.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { useDeviceTypes } from "../fleets/data.ts";
import { expiryDateFor } from "../preferences/api-key-expiry.ts";
import { type AddDeviceCommon, provisioningKeyName } from "./add-device-common.ts";
import {
  type BalenaOsSettings,
  balenaOsOptions,
  configureCommand,
  DEFAULT_BALENAOS_SETTINGS,
  defaultOsVersion,
  imageOf,
  networkProblems,
  sortedOsVersions,
  submitImageDownload,
  useOsImages,
} from "./balenaos.ts";
import { BalenaOsFields } from "./balenaos-fields.tsx";
import { useOsVersions } from "./os-updates.tsx";

/** The hidden frame the image download's form is posted into: the page stays, the browser downloads. */
const DOWNLOAD_FRAME = "flotilla-os-image-download";

/**
 * A balenaOS device (issue 35): the OS version, edition and network, then the configured image
 * from this server (config.json already in its boot partition) or, without one, config.json and
 * the `balena os configure` line for an image from balena.
 */
export function BalenaOsAddDevice({ fleet, deviceType, expiry, header, expirySelect, onClose }: AddDeviceCommon) {
  const { t } = useTranslation();
  const sdk = useSdk();
  const { config } = useServices();
  const queryClient = useQueryClient();
  const deviceTypeName = useDeviceTypes().data?.find((type) => type.slug === deviceType)?.name ?? deviceType;
  const catalogue = useOsVersions(deviceType ? [deviceType] : []);
  const osImages = useOsImages(deviceType);
  const versions = useMemo(() => sortedOsVersions(catalogue.data?.[deviceType] ?? []), [catalogue.data, deviceType]);
  const images = osImages.data?.images ?? [];
  const [settings, setSettings] = useState<BalenaOsSettings>(DEFAULT_BALENAOS_SETTINGS);
  const [configSaved, setConfigSaved] = useState(false);
  const [imageStarted, setImageStarted] = useState<{ fileName: string; size: number }>();
  const [error, setError] = useState<string>();
  // Something was downloaded in this dialog (its close button then says "Done").
  const [downloaded, setDownloaded] = useState(false);
  // A posted download that turned into a page (an error) loads the frame; a file download does not.
  const awaitingImage = useRef(false);

  // The version offered first, once the catalogue and the images are known (again for another device type).
  const loaded = catalogue.isSuccess && !osImages.isPending;
  useEffect(() => {
    if (!loaded) return;
    setSettings((current) =>
      versions.some((release) => release.raw_version === current.version)
        ? current
        : { ...current, version: defaultOsVersion(versions, osImages.data?.images ?? []) },
    );
  }, [loaded, versions, osImages.data]);

  const image = imageOf(images, settings.version);
  const problems = networkProblems(settings);
  const ready = settings.version !== "" && Object.keys(problems).length === 0;
  const keyFields = () => {
    const expiryDate = expiryDateFor(expiry, "");
    if (!expiryDate.ok) throw new Error(t(`preferences.tokens.${expiryDate.error}`));
    return {
      provisioningKeyName: provisioningKeyName(t),
      ...(expiryDate.expiryDate ? { provisioningKeyExpiryDate: expiryDate.expiryDate } : {}),
    };
  };

  const downloadConfig = useMutation({
    meta: { reportErrors: false },
    mutationFn: () =>
      sdk.models.os.getConfig(fleet.id, {
        ...balenaOsOptions(settings),
        deviceType,
        ...keyFields(),
      } as Parameters<typeof sdk.models.os.getConfig>[1]),
    onSuccess: async (answer) => {
      saveBlob(new Blob([`${JSON.stringify(answer, null, 2)}\n`], { type: "application/json" }), "config.json");
      setConfigSaved(true);
      setDownloaded(true);
      setError(undefined);
      await queryClient.invalidateQueries({ queryKey: ["fleet", fleet.id, "provisioning-keys"] });
    },
    onError: (caught) => setError(errorText(caught)),
  });

  const downloadImage = useMutation({
    meta: { reportErrors: false },
    mutationFn: async () => {
      if (!image) throw new Error(t("devices.add.balenaos.no_image_title", { version: settings.version, deviceType }));
      const token = await sdk.auth.getToken();
      const options = balenaOsOptions(settings);
      submitImageDownload({
        apiUrl: config.apiUrl,
        token,
        target: DOWNLOAD_FRAME,
        fields: { deviceType, appId: fleet.id, ...options, ...keyFields() },
      });
      awaitingImage.current = true;
      return {
        fileName: osImageFileName(deviceType, image.version, {
          fleet: fleet.app_name,
          developmentMode: settings.developmentMode,
        }),
        size: image.size,
      };
    },
    onSuccess: async (started) => {
      setImageStarted(started);
      setDownloaded(true);
      setError(undefined);
      await queryClient.invalidateQueries({ queryKey: ["fleet", fleet.id, "provisioning-keys"] });
    },
    onError: (caught) => setError(errorText(caught)),
  });

  const imageFailed = () => {
    if (!awaitingImage.current) return;
    awaitingImage.current = false;
    setImageStarted(undefined);
    setError(t("devices.add.balenaos.image_failed"));
  };
  const finished = downloaded;
  const size = image ? formatBytes(image.size) : "";

  return (
    <>
      <DialogContent>
        <Stack spacing={2} sx={{ pt: 1 }}>
          {header}
          <BalenaOsFields
            settings={settings}
            onChange={setSettings}
            versions={versions}
            images={images}
            problems={problems}
            beside={expirySelect(false)}
          />
          {loaded && versions.length === 0 ? (
            <Alert severity="warning">{t("devices.add.balenaos.no_versions", { deviceType: deviceTypeName })}</Alert>
          ) : null}
          {loaded && settings.version && image ? (
            <Box
              sx={{
                display: "flex",
                alignItems: "center",
                gap: 1.5,
                border: 1,
                borderColor: "divider",
                borderRadius: 1,
                px: 2,
                py: 1.5,
              }}
            >
              <CheckCircleOutlined color="success" fontSize="small" />
              <Box sx={{ flex: 1, minWidth: 0 }}>
                <Typography variant="body2" sx={{ fontWeight: 500 }}>
                  {t("devices.add.balenaos.image_title", { version: settings.version, deviceType: deviceTypeName })}
                </Typography>
                <Typography variant="body2" color="text.secondary">
                  {t("devices.add.balenaos.image_help")}
                </Typography>
              </Box>
              <Typography variant="body2" sx={{ fontVariantNumeric: "tabular-nums", whiteSpace: "nowrap" }}>
                {size}
              </Typography>
            </Box>
          ) : null}
          {loaded && settings.version && !image ? (
            <Alert severity="info">
              <AlertTitle>
                {t("devices.add.balenaos.no_image_title", { version: settings.version, deviceType: deviceTypeName })}
              </AlertTitle>
              <Typography variant="body2" sx={{ mb: 1 }}>
                <Trans
                  i18nKey="devices.add.balenaos.no_image_where"
                  components={{
                    page: <Link href={BALENAOS_DOWNLOAD_PAGE} target="_blank" rel="noopener noreferrer" />,
                  }}
                />
              </Typography>
              <Typography variant="body2">
                <Trans
                  i18nKey="devices.add.balenaos.no_image_operator"
                  values={{ path: `${deviceType}/${settings.version}.img` }}
                  components={{ code: <Box component="code" sx={{ fontFamily: MONO_FONT_STACK, fontSize: 12.5 }} /> }}
                />
              </Typography>
            </Alert>
          ) : null}
          <DeviceTypeInstructions slug={deviceType} />
          {error ? <Alert severity="error">{error}</Alert> : null}
          {imageStarted ? (
            <Alert severity="success">
              {t("devices.add.balenaos.image_started", {
                file: imageStarted.fileName,
                size: formatBytes(imageStarted.size),
              })}
            </Alert>
          ) : null}
          {configSaved ? (
            <>
              <Typography variant="body2" color="text.secondary">
                {t("devices.add.balenaos.configure_help")}
              </Typography>
              <CommandBlock
                label={t("devices.add.balenaos.configure")}
                copyLabel={t("devices.add.copy")}
                copiedText={t("devices.add.copied")}
                lines={[configureCommand(osImageFileName(deviceType, settings.version))]}
              />
            </>
          ) : null}
          {finished ? <Alert severity="info">{t("devices.add.balenaos.secret")}</Alert> : null}
        </Stack>
        {/* The image download's form is posted here (see submitImageDownload). */}
        <iframe name={DOWNLOAD_FRAME} title={DOWNLOAD_FRAME} hidden onLoad={imageFailed} />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{finished ? t("devices.add.done") : t("confirm.cancel")}</Button>
        <Button
          variant={image && !configSaved ? "outlined" : "contained"}
          loading={downloadConfig.isPending}
          disabled={!deviceType || !ready}
          onClick={() => downloadConfig.mutate()}
        >
          {t("devices.add.balenaos.download_config")}
        </Button>
        {image ? (
          <Button
            variant="contained"
            loading={downloadImage.isPending}
            disabled={!ready}
            onClick={() => downloadImage.mutate()}
          >
            {t("devices.add.balenaos.download_image", { size })}
          </Button>
        ) : null}
      </DialogActions>
    </>
  );
}

/**
 * How to install balenaOS on the chosen device type (spec 2 §7 "Device type instructions load per
 * contract"): balena-sdk's deviceType.getInstructions, computed from the type's contract.
 */
function DeviceTypeInstructions({ slug }: { slug: string }) {
  const { t } = useTranslation();
  // The contract as the device type list read it; the steps are computed from it, without eval
  // (balena-sdk's getInstructions compiles Handlebars templates, which the CSP forbids).
  const contract = useDeviceTypes().data?.find((type) => type.slug === slug)?.contract;
  const steps = useMemo(() => deviceTypeInstructions(contract), [contract]);
  if (steps.length === 0) return null;
  return (
    <Box component="section" aria-label={t("devices.add.instructions")}>
      <Typography variant="subtitle2" component="h3" sx={{ fontWeight: 600, mb: 0.5 }}>
        {t("devices.add.instructions")}
      </Typography>
      <Box component="ol" sx={{ m: 0, pl: 2.5, typography: "body2", color: "text.secondary" }}>
        {steps.map((step, index) => (
          // Steps can repeat a sentence; their place in the list is what they are.
          // biome-ignore lint/suspicious/noArrayIndexKey: the list is static for a device type
          <li key={index}>{step}</li>
        ))}
      </Box>
    </Box>
  );
}
