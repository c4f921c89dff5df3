import ContentCopyOutlined from "@mui/icons-material/ContentCopyOutlined";
import DownloadOutlined from "@mui/icons-material/DownloadOutlined";
import FolderOutlined from "@mui/icons-material/FolderOutlined";
import InsertDriveFileOutlined from "@mui/icons-material/InsertDriveFileOutlined";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogTitle from "@mui/material/DialogTitle";
import IconButton from "@mui/material/IconButton";
import Tooltip from "@mui/material/Tooltip";
import Typography from "@mui/material/Typography";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { formatBytes } from "../../lib/format.ts";
import { saveBlob } from "../../lib/save-blob.ts";
import { reportError, showToast } from "../../lib/toasts.ts";
import { MONO_FONT_STACK } from "../../theme.ts";
import { downloadAsset } from "./data.ts";
import { type AssetNode, type AssetRow, assetTree } from "./model.ts";

/** A text file in a dialog: monospaced, scrollable, with copy and download (Dockerfile, docker-compose). */
export function FileDialog(props: {
  title: string;
  filename: string;
  text: string | undefined;
  /** Shown instead of the text when there is none. */
  missing: string;
  error?: string;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const text = props.text;
  return (
    <Dialog open onClose={props.onClose} maxWidth="md" fullWidth>
      <DialogTitle sx={{ display: "flex", alignItems: "center", gap: 1 }}>
        <Box component="span" sx={{ flex: 1 }}>
          {props.title}
        </Box>
        {text !== undefined ? (
          <Tooltip title={t("releases.viewer.copy")}>
            <IconButton
              size="small"
              aria-label={t("releases.viewer.copy")}
              onClick={() =>
                void navigator.clipboard?.writeText(text).then(
                  () => showToast("success", t("releases.viewer.copied")),
                  () => undefined,
                )
              }
            >
              <ContentCopyOutlined fontSize="small" />
            </IconButton>
          </Tooltip>
        ) : null}
      </DialogTitle>
      <DialogContent>
        {props.error ? (
          <Alert severity="error">{props.error}</Alert>
        ) : text === undefined ? (
          <Alert severity="info">{props.missing}</Alert>
        ) : (
          <Box
            component="pre"
            aria-label={props.filename}
            sx={{
              m: 0,
              p: 2,
              borderRadius: 1,
              bgcolor: "#0f141c",
              color: "#d6dde8",
              fontFamily: MONO_FONT_STACK,
              fontSize: 12.5,
              lineHeight: 1.55,
              maxHeight: "60vh",
              overflow: "auto",
            }}
          >
            {text}
          </Box>
        )}
      </DialogContent>
      <DialogActions>
        {text !== undefined ? (
          <Button
            startIcon={<DownloadOutlined />}
            onClick={() => saveBlob(new Blob([text], { type: "application/octet-stream" }), props.filename)}
          >
            {t("releases.viewer.download", { name: props.filename })}
          </Button>
        ) : null}
        <Button onClick={props.onClose} variant="contained">
          {t("releases.viewer.close")}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

function AssetBranch({ nodes, depth }: { nodes: AssetNode[]; depth: number }) {
  const { t } = useTranslation();
  const sdk = useSdk();
  return (
    <Box component="ul" role={depth === 0 ? "tree" : "group"} sx={{ listStyle: "none", m: 0, p: 0 }}>
      {nodes.map((node) => (
        <Box component="li" role="treeitem" aria-label={node.path} key={`${node.path}-${node.asset ? "f" : "d"}`}>
          <Box
            sx={{
              display: "flex",
              alignItems: "center",
              gap: 1,
              pl: depth * 2.5,
              py: 0.5,
              minHeight: 34,
              borderBottom: 1,
              borderColor: "divider",
            }}
          >
            {node.asset ? (
              <InsertDriveFileOutlined fontSize="small" sx={{ color: "text.secondary" }} />
            ) : (
              <FolderOutlined fontSize="small" sx={{ color: "text.secondary" }} />
            )}
            <Typography variant="body2" sx={{ flex: 1, fontWeight: node.asset ? 400 : 600, minWidth: 0 }} noWrap>
              {node.name}
            </Typography>
            {node.asset?.asset?.size !== undefined ? (
              <Typography variant="body2" color="text.secondary" sx={{ fontVariantNumeric: "tabular-nums" }}>
                {formatBytes(node.asset.asset.size)}
              </Typography>
            ) : null}
            {node.asset?.asset?.href ? (
              <Tooltip title={t("releases.assets.download", { name: node.name })}>
                <IconButton
                  size="small"
                  aria-label={t("releases.assets.download", { name: node.name })}
                  onClick={() => {
                    const asset = node.asset as AssetRow;
                    void downloadAsset(sdk, asset).catch(reportError);
                  }}
                >
                  <DownloadOutlined fontSize="small" />
                </IconButton>
              </Tooltip>
            ) : null}
          </Box>
          {node.children.length > 0 ? <AssetBranch nodes={node.children} depth={depth + 1} /> : null}
        </Box>
      ))}
    </Box>
  );
}

/** The release's assets as a tree of their asset_key paths; files download with the bearer token. */
export function AssetsTree({ assets }: { assets: AssetRow[] }) {
  const { t } = useTranslation();
  const tree = assetTree(assets);
  if (tree.length === 0) {
    return (
      <Typography variant="body2" color="text.secondary">
        {t("releases.assets.none")}
      </Typography>
    );
  }
  return (
    <Box aria-label={t("releases.assets.title")}>
      <AssetBranch nodes={tree} depth={0} />
    </Box>
  );
}
