import { readFileSync } from "node:fs";
import { alpha, darken, lighten } from "@mui/material/styles";
import { describe, expect, it } from "vitest";
import { createAppTheme, headerColors, statusColors } from "./theme.ts";

describe("status colours", () => {
  it("gives each device status its own colour (spec 2 §4, DEV-009)", () => {
    const colours = Object.values(statusColors);
    expect(new Set(colours).size).toBe(colours.length);
  });
});

describe("the plain pages' colours (components/plain-ui.css)", () => {
  const css = readFileSync(new URL("./components/plain-ui.css", import.meta.url), "utf8");
  /** The custom properties of the block that starts with `selector`. */
  const block = (selector: string) => {
    const start = css.indexOf(`${selector} {`);
    const body = css.slice(start, css.indexOf("}", start));
    return Object.fromEntries([...body.matchAll(/(--fl-[\w-]+):\s*([^;]+);/g)].map((m) => [m[1], m[2]]));
  };
  const light = block(".fl-ui");
  const modes = { light, dark: { ...light, ...block('.fl-ui[data-color-mode="dark"]') } };

  for (const mode of ["light", "dark"] as const) {
    it(`are the ${mode} theme's, as MUI computes them`, () => {
      const { palette } = createAppTheme(mode);
      const vars = modes[mode];
      expect({
        bg: vars["--fl-bg"],
        paper: vars["--fl-paper"],
        text: vars["--fl-text"],
        secondary: vars["--fl-text-secondary"],
        disabled: vars["--fl-text-disabled"],
        divider: vars["--fl-divider"],
        primary: vars["--fl-primary"],
        primaryDark: vars["--fl-primary-dark"],
        contrast: vars["--fl-primary-contrast"],
        outline: vars["--fl-primary-outline"],
        hover: vars["--fl-primary-hover"],
        error: vars["--fl-error"],
        alertText: vars["--fl-alert-error-text"],
        alertBg: vars["--fl-alert-error-bg"],
        actionActive: vars["--fl-action-active"],
        actionHover: vars["--fl-action-hover"],
        actionDisabled: vars["--fl-action-disabled"],
        actionDisabledBg: vars["--fl-action-disabled-bg"],
        headerBg: vars["--fl-header-bg"],
        headerText: vars["--fl-header-text"],
        headerMuted: vars["--fl-header-muted"],
      }).toEqual({
        bg: palette.background.default,
        paper: palette.background.paper,
        text: palette.text.primary,
        secondary: palette.text.secondary,
        disabled: palette.text.disabled,
        divider: palette.divider,
        primary: palette.primary.main,
        primaryDark: palette.primary.dark,
        contrast: palette.primary.contrastText,
        outline: alpha(palette.primary.main, 0.5),
        hover: alpha(palette.primary.main, palette.action.hoverOpacity),
        error: palette.error.main,
        alertText: (mode === "light" ? darken : lighten)(palette.error.light, 0.6),
        alertBg: (mode === "light" ? lighten : darken)(palette.error.light, 0.9),
        actionActive: palette.action.active,
        actionHover: palette.action.hover,
        actionDisabled: palette.action.disabled,
        actionDisabledBg: palette.action.disabledBackground,
        headerBg: headerColors.background,
        headerText: headerColors.text,
        headerMuted: headerColors.muted,
      });
    });
  }
});
