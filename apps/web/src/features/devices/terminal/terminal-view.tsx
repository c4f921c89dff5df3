import "@xterm/xterm/css/xterm.css";
import { TERMINAL_HOST_TARGET, TERMINAL_SCROLLBACK } from "@flotilla/domain";
import Box from "@mui/material/Box";
import { Terminal } from "@xterm/xterm";
import { useEffect, useRef, useState } from "react";
import { useServices } from "../../../app-services.tsx";
import { MONO_FONT_STACK, visuallyHidden } from "../../../theme.ts";
import { TerminalConnection, type TerminalStatus } from "./connection.ts";

const ROWS = 20;

/** The websocket URL of the terminal on the API origin (http → ws, https → wss). */
export const terminalUrl = (apiUrl: string) => `${apiUrl.replace(/^http/, "ws")}/terminal/v1/connect`;

/**
 * One session's xterm.js terminal (scrollback 3000, spec 2 §9), sized to its box: the columns
 * follow the card's width and each change is sent as a resize. The session lives as long as the
 * view: unmounting (closing the tab, leaving the device page) closes it. `rebindKey` changes
 * when the service's running container does: the session then reconnects (spec 2 §4).
 */
export function TerminalView(props: {
  uuid: string;
  target: string;
  label: string;
  visible: boolean;
  rebindKey: string | undefined;
  onStatus: (status: TerminalStatus) => void;
  reconnectRequest: number;
}) {
  const { config, sdk } = useServices();
  const host = useRef<HTMLDivElement>(null);
  const connection = useRef<TerminalConnection | null>(null);
  const terminal = useRef<Terminal | null>(null);
  const [text, setText] = useState("");
  const onStatus = useRef(props.onStatus);
  onStatus.current = props.onStatus;

  // biome-ignore lint/correctness/useExhaustiveDependencies: one session per view; target and device never change for a tab
  useEffect(() => {
    if (!host.current) return;
    const term = new Terminal({
      scrollback: TERMINAL_SCROLLBACK,
      rows: ROWS,
      fontSize: 13,
      fontFamily: MONO_FONT_STACK,
      cursorBlink: true,
      theme: { background: "#0f141c", foreground: "#d6dde8", cursor: "#d6dde8", selectionBackground: "#334155" },
    });
    term.open(host.current);
    terminal.current = term;
    // The canvas is no text: a hidden copy of the screen goes to screen readers and searches.
    let mirrorTimer: number | undefined;
    const mirror = () => {
      if (mirrorTimer !== undefined) return;
      mirrorTimer = window.setTimeout(() => {
        mirrorTimer = undefined;
        const buffer = term.buffer.active;
        const lines: string[] = [];
        for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
        while (lines.length > 0 && lines.at(-1) === "") lines.pop();
        setText(lines.join("\n"));
      }, 50);
    };
    const session = new TerminalConnection({
      url: terminalUrl(config.apiUrl),
      token: async () => (await sdk.auth.getToken()) ?? "",
      uuid: props.uuid,
      target: props.target,
      size: () => ({ cols: term.cols, rows: term.rows }),
      onData: (data) => term.write(data, mirror),
      onStatus: (status) => onStatus.current(status),
    });
    connection.current = session;
    const typed = term.onData((data) => session.send(data));
    const resized = term.onResize(({ cols, rows }) => session.resize(cols, rows));
    const fit = () => {
      const element = host.current;
      const core = (
        term as unknown as { _core?: { _renderService?: { dimensions?: { css?: { cell?: { width?: number } } } } } }
      )._core;
      const cellWidth = core?._renderService?.dimensions?.css?.cell?.width;
      if (!element || !cellWidth || element.clientWidth === 0) return;
      const cols = Math.max(20, Math.floor((element.clientWidth - 4) / cellWidth));
      if (cols !== term.cols) term.resize(cols, term.rows);
    };
    fit();
    const observer = new ResizeObserver(fit);
    observer.observe(host.current);
    session.connect();
    return () => {
      observer.disconnect();
      typed.dispose();
      resized.dispose();
      session.close();
      if (mirrorTimer !== undefined) window.clearTimeout(mirrorTimer);
      term.dispose();
      connection.current = null;
      terminal.current = null;
    };
  }, []);

  // A new container of the service: the session rebinds to it.
  const boundTo = useRef(props.rebindKey);
  useEffect(() => {
    if (props.target === TERMINAL_HOST_TARGET || props.rebindKey === undefined) return;
    if (boundTo.current !== undefined && boundTo.current !== props.rebindKey) {
      terminal.current?.write("\r\n");
      connection.current?.rebind();
    }
    boundTo.current = props.rebindKey;
  }, [props.rebindKey, props.target]);

  // The user asked to connect again after a failure.
  useEffect(() => {
    if (props.reconnectRequest > 0) connection.current?.connect();
  }, [props.reconnectRequest]);

  useEffect(() => {
    if (props.visible) terminal.current?.focus();
  }, [props.visible]);

  return (
    <Box sx={{ display: props.visible ? "block" : "none", bgcolor: "#0f141c", borderRadius: 1, p: 1 }}>
      <div ref={host} />
      <Box component="pre" role="log" aria-label={props.label} sx={visuallyHidden}>
        {text}
      </Box>
    </Box>
  );
}
