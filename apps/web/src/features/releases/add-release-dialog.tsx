import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import Stack from "@mui/material/Stack";
import Tab from "@mui/material/Tab";
import Tabs from "@mui/material/Tabs";
import ToggleButton from "@mui/material/ToggleButton";
import ToggleButtonGroup from "@mui/material/ToggleButtonGroup";
import Typography from "@mui/material/Typography";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { CommandBlock } from "../../components/command-block.tsx";
import { TextLink } from "../../components/links.tsx";
import type { RuntimeConfig } from "../../lib/config.ts";
import type { Fleet } from "../fleet-access/data.ts";
import { useSessionUser } from "../preferences/use-user.ts";
import { useCliVersion } from "./data.ts";

export type CliPlatform = "linux" | "macos" | "windows";
export const CLI_PLATFORMS: readonly CliPlatform[] = ["linux", "macos", "windows"];

/** The commands that get Node.js (the CLI's runtime) on each system. */
const NODE_INSTALL: Record<CliPlatform, string> = {
  linux: "sudo apt-get install -y nodejs npm   # or your distribution's Node.js 20.19+ package",
  macos: "brew install node",
  windows: "winget install OpenJS.NodeJS.LTS",
};

/**
 * The `flotilla` CLI's commands for a fleet (apps/cli, bin `flotilla`): log in against this API,
 * then push the project in the current directory to `{organization handle}/{fleet name}`.
 */
export function cliCommands(apiUrl: string, fleet: { app_name: string; organization: Array<{ handle: string }> }) {
  const owner = fleet.organization[0]?.handle;
  return {
    setup: ["npm install"],
    login: `npx flotilla login --api ${apiUrl}`,
    push: `npx flotilla push ${owner ? `${owner}/` : ""}${fleet.app_name}`,
  };
}

/**
 * The git commands for a fleet (docs/releases.md "Git push"): a remote on the SSH gateway named
 * `flotilla` (`{user}@{host}:{slug}.git` on port 22, an `ssh://` URL with the port otherwise),
 * and the push of main that builds a release.
 */
export function gitCommands(gateway: NonNullable<RuntimeConfig["sshGateway"]>, username: string, slug: string) {
  const plain = /^[A-Za-z0-9._-]+$/.test(username);
  const user = plain ? username : encodeURIComponent(username);
  const remote =
    gateway.port === 22 && plain
      ? `${user}@${gateway.host}:${slug}.git`
      : `ssh://${user}@${gateway.host}${gateway.port === 22 ? "" : `:${gateway.port}`}/${slug}.git`;
  return { remoteAdd: `git remote add flotilla ${remote}`, push: "git push flotilla main" };
}

function Commands({ lines, label }: { lines: string[]; label: string }) {
  const { t } = useTranslation();
  return (
    <CommandBlock
      lines={lines}
      label={label}
      copyLabel={`${t("releases.add.copy")}: ${label}`}
      copiedText={t("releases.add.copied")}
    />
  );
}

function Step({ number, title, children }: { number: number; title: string; children: React.ReactNode }) {
  return (
    <Box sx={{ display: "grid", gridTemplateColumns: "28px 1fr", columnGap: 1.5 }}>
      <Box
        aria-hidden
        sx={{
          width: 24,
          height: 24,
          borderRadius: "50%",
          display: "grid",
          placeItems: "center",
          fontSize: 12,
          fontWeight: 700,
          bgcolor: "primary.main",
          color: "primary.contrastText",
        }}
      >
        {number}
      </Box>
      <Box sx={{ minWidth: 0 }}>
        <Typography variant="subtitle2" sx={{ fontWeight: 600, mb: 0.75 }}>
          {title}
        </Typography>
        {children}
      </Box>
    </Box>
  );
}

/**
 * Add release (spec 2 §2 "Add-release dialog"): the CLI, recommended, with how to get it per
 * operating system, its version from `{api}/cli/package.json` (fetched without token), and the
 * login and push commands; git: the SSH-key step (the user's preferences), the remote on the
 * server's SSH gateway with the user's name and the fleet's slug, and the push. Without a
 * gateway (FLOTILLA_SSH_PORT unset) the git method says how the operator turns it on.
 */
export function AddReleaseDialog({ fleet, onClose }: { fleet: Fleet; onClose: () => void }) {
  const { t } = useTranslation();
  const { config } = useServices();
  const [method, setMethod] = useState<"cli" | "git">("cli");
  const [platform, setPlatform] = useState<CliPlatform>(() =>
    /Win/i.test(navigator.platform) ? "windows" : /Mac/i.test(navigator.platform) ? "macos" : "linux",
  );
  const version = useCliVersion(config.apiUrl);
  const commands = cliCommands(config.apiUrl, fleet);
  const username = useSessionUser()?.username ?? "<username>";
  const git = config.sshGateway ? gitCommands(config.sshGateway, username, fleet.slug) : undefined;
  return (
    <Dialog open onClose={onClose} maxWidth="sm" fullWidth aria-labelledby="add-release-title">
      <DialogTitle id="add-release-title">{t("releases.add.title", { name: fleet.app_name })}</DialogTitle>
      <DialogContent>
        <Tabs
          value={method}
          onChange={(_event, next: "cli" | "git") => setMethod(next)}
          aria-label={t("releases.add.method")}
          sx={{ mb: 2, borderBottom: 1, borderColor: "divider" }}
        >
          <Tab value="cli" label={t("releases.add.cli_recommended")} />
          <Tab value="git" label={t("releases.add.git")} />
        </Tabs>
        {method === "cli" ? (
          <Stack spacing={2.5}>
            <Step number={1} title={t("releases.add.get_cli")}>
              <ToggleButtonGroup
                size="small"
                exclusive
                value={platform}
                onChange={(_event, next: CliPlatform | null) => next && setPlatform(next)}
                aria-label={t("releases.add.platform")}
                sx={{ mb: 1 }}
              >
                {CLI_PLATFORMS.map((os) => (
                  <ToggleButton key={os} value={os} sx={{ px: 1.5, textTransform: "none" }}>
                    {t(`releases.add.os.${os}`)}
                  </ToggleButton>
                ))}
              </ToggleButtonGroup>
              <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
                {t("releases.add.get_cli_text")}
              </Typography>
              <Commands lines={[NODE_INSTALL[platform], ...commands.setup]} label={t("releases.add.install")} />
              <Box sx={{ mt: 1, display: "flex", alignItems: "center", gap: 1 }}>
                {version.data ? (
                  <Chip
                    size="small"
                    variant="outlined"
                    label={t("releases.add.cli_version", { version: version.data })}
                    data-testid="cli-version"
                  />
                ) : version.isSuccess ? (
                  <Typography variant="caption" color="text.secondary">
                    {t("releases.add.cli_version_unknown")}
                  </Typography>
                ) : null}
              </Box>
            </Step>
            <Step number={2} title={t("releases.add.login")}>
              <Commands lines={[commands.login]} label={t("releases.add.login")} />
            </Step>
            <Step number={3} title={t("releases.add.push")}>
              <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
                {t("releases.add.push_text")}
              </Typography>
              <Commands lines={[commands.push]} label={t("releases.add.push")} />
            </Step>
          </Stack>
        ) : git ? (
          <Stack spacing={2.5}>
            <Step number={1} title={t("releases.add.git_key")}>
              <Typography variant="body2" color="text.secondary">
                {t("releases.add.git_key_text", { username })}{" "}
                <TextLink to="/preferences/sshkeys" underline="hover">
                  {t("releases.add.ssh_keys_link")}
                </TextLink>
              </Typography>
            </Step>
            <Step number={2} title={t("releases.add.git_remote")}>
              <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
                {t("releases.add.git_remote_text")}
              </Typography>
              <Commands lines={[git.remoteAdd]} label={t("releases.add.git_remote")} />
            </Step>
            <Step number={3} title={t("releases.add.git_push")}>
              <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
                {t("releases.add.git_push_text")}
              </Typography>
              <Commands lines={[git.push]} label={t("releases.add.git_push")} />
            </Step>
          </Stack>
        ) : (
          <Stack spacing={2}>
            <Alert severity="info">{t("releases.add.git_no_gateway")}</Alert>
            <Typography variant="body2" color="text.secondary">
              {t("releases.add.git_ssh_text")}{" "}
              <TextLink to="/preferences/sshkeys" underline="hover">
                {t("releases.add.ssh_keys_link")}
              </TextLink>
            </Typography>
            <Box>
              <Button size="small" variant="outlined" onClick={() => setMethod("cli")}>
                {t("releases.add.use_cli")}
              </Button>
            </Box>
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t("releases.add.close")}</Button>
      </DialogActions>
    </Dialog>
  );
}
