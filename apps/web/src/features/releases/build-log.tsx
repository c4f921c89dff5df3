import "@xterm/xterm/css/xterm.css";
import { BUILD_LOG_MAX_LINES } from "@flotilla/domain";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";
import { Terminal } from "@xterm/xterm";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { MONO_FONT_STACK, visuallyHidden } from "../../theme.ts";
import { buildLogTail } from "./model.ts";

/** Scrollback of the build-log terminal (spec 2 §9: terminal scrollback 3000). */
const SCROLLBACK = 3000;

/**
 * The build log in a read-only xterm.js terminal (DESIGN §5; spec 2 §2, §9): the last 2,999
 * lines with a notice when earlier ones were cut. While the build runs the log grows at each
 * poll; only the new lines are written, and the view follows the end unless the reader scrolled up.
 */
export function BuildLogTerminal({ log, running }: { log: string | null; running: boolean }) {
  const { t } = useTranslation();
  const host = useRef<HTMLDivElement>(null);
  const terminal = useRef<Terminal | null>(null);
  const written = useRef<string[]>([]);
  const tail = buildLogTail(log);

  useEffect(() => {
    if (!host.current) return;
    const term = new Terminal({
      disableStdin: true,
      convertEol: true,
      scrollback: SCROLLBACK,
      rows: 22,
      fontSize: 12.5,
      fontFamily: MONO_FONT_STACK,
      cursorStyle: "bar",
      cursorInactiveStyle: "none",
      theme: { background: "#0f141c", foreground: "#d6dde8", cursor: "#0f141c", selectionBackground: "#334155" },
    });
    term.open(host.current);
    terminal.current = term;
    written.current = [];
    // The terminal's columns follow its box.
    const fit = () => {
      const element = host.current;
      const core = (
        term as unknown as { _core?: { _renderService?: { dimensions?: { css?: { cell?: { width?: number } } } } } }
      )._core;
      const cellWidth = core?._renderService?.dimensions?.css?.cell?.width;
      if (!element || !cellWidth) return;
      const cols = Math.max(40, Math.floor((element.clientWidth - 16) / cellWidth));
      if (cols !== term.cols) term.resize(cols, term.rows);
    };
    fit();
    const observer = new ResizeObserver(fit);
    observer.observe(host.current);
    return () => {
      observer.disconnect();
      term.dispose();
      terminal.current = null;
    };
  }, []);

  const joined = tail.lines.join("\n");
  useEffect(() => {
    const term = terminal.current;
    if (!term) return;
    const before = written.current;
    const lines = joined ? joined.split("\n") : [];
    // Appended lines are written; anything else (a new release, a cut start) redraws.
    const appended =
      before.length > 0 && lines.length >= before.length && before.every((line, index) => lines[index] === line);
    const atEnd = term.buffer.active.viewportY >= term.buffer.active.baseY;
    if (appended) {
      const fresh = lines.slice(before.length);
      if (fresh.length > 0) term.write(`${fresh.map((line) => `\r\n${line}`).join("")}`);
    } else {
      term.reset();
      if (lines.length > 0) term.write(lines.join("\r\n"));
    }
    written.current = lines;
    if (atEnd || !appended) term.scrollToBottom();
  }, [joined]);

  return (
    <Box>
      {tail.truncated ? (
        <Alert severity="info" sx={{ mb: 1 }}>
          {t("releases.build_log.truncated", { shown: BUILD_LOG_MAX_LINES, total: tail.total })}
        </Alert>
      ) : null}
      <Box
        role="log"
        aria-label={t("releases.build_log.title")}
        data-lines={tail.lines.length}
        sx={{ bgcolor: "#0f141c", borderRadius: 1, p: 1, "& .xterm": { height: "100%" }, minHeight: 200 }}
      >
        <div ref={host} />
        {/* The terminal draws on a canvas; screen readers and searches get the text here. */}
        <Box component="pre" sx={visuallyHidden}>
          {joined}
        </Box>
      </Box>
      {tail.lines.length === 0 ? (
        <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
          {running ? t("releases.build_log.waiting") : t("releases.build_log.empty")}
        </Typography>
      ) : null}
    </Box>
  );
}
