import {
  DEFAULT_VARIABLE_RULES,
  fileVariableProblem,
  parseIntegerVariable,
  VARIABLE_TEXTS,
  type VariableRules,
} from "@flotilla/domain";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import MenuItem from "@mui/material/MenuItem";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import type { TFunction } from "i18next";
import { useSdk } from "../../app-services.tsx";
import type { ValueField } from "./variables-editor.tsx";

/** A configuration variable's schema (spec 2 §3: description, enum, default, format, will_reboot). */
export interface ConfigVarProperty {
  type?: string;
  description?: string;
  enum?: Array<string | number>;
  enumNames?: string[];
  default?: string | number | boolean;
  format?: string;
  will_reboot?: boolean;
  minimum?: number;
  maximum?: number;
}

export interface ConfigVarSchema {
  reservedNames: string[];
  reservedNamespaces: string[];
  whiteListedNames: string[];
  whiteListedNamespaces: string[];
  blackListedNames: string[];
  configVarSchema: { properties: Record<string, ConfigVarProperty> };
}

export function useConfigVarSchema(deviceType: string | undefined) {
  const sdk = useSdk();
  return useQuery({
    // A failed load is a danger toast (spec 2 §8), not the error page.
    meta: { reportErrors: true },
    queryKey: ["config-vars", deviceType],
    enabled: deviceType !== undefined,
    staleTime: 10 * 60_000,
    queryFn: async () => (await sdk.models.config.getConfigVarSchema(deviceType ?? "")) as unknown as ConfigVarSchema,
  });
}

/** Integer-typed values are parsed from the entered string (spec 2 §5). */
export function integerProblem(value: string, property: ConfigVarProperty, t: TFunction): string | undefined {
  const number = parseIntegerVariable(value);
  if (number === undefined) return VARIABLE_TEXTS.integerRequired;
  if (property.minimum !== undefined && number < property.minimum)
    return t("variables.minimum", { min: property.minimum });
  if (property.maximum !== undefined && number > property.maximum)
    return t("variables.maximum", { max: property.maximum });
  return undefined;
}

/** The name rules of the server configuration (from `GET /config/vars`), or the defaults. */
export const rulesOf = (schema: ConfigVarSchema | undefined): VariableRules =>
  schema
    ? {
        reservedNames: schema.reservedNames,
        reservedNamespaces: schema.reservedNamespaces,
        whiteListedNames: schema.whiteListedNames,
        whiteListedNamespaces: schema.whiteListedNamespaces,
        blackListedNames: schema.blackListedNames,
      }
    : DEFAULT_VARIABLE_RULES;

const readDataUrl = (file: File) =>
  new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });

/** The value control of a known configuration variable: a choice, a number, a PNG file or text. */
export function schemaValueField(schema: ConfigVarSchema | undefined, t: TFunction) {
  return (name: string): ValueField => {
    const property = schema?.configVarSchema.properties[name];
    if (!property) return {};
    const help = [property.description, property.will_reboot ? t("variables.will_reboot") : undefined]
      .filter(Boolean)
      .join(" ");
    if (property.enum) {
      const options = property.enum;
      return {
        render: (value, onChange) => (
          <TextField
            select
            label={t("variables.value")}
            value={value}
            helperText={help}
            onChange={(event) => onChange(event.target.value)}
          >
            {options.map((option, index) => (
              <MenuItem key={String(option)} value={String(option)}>
                {property.enumNames?.[index] ?? String(option)}
              </MenuItem>
            ))}
          </TextField>
        ),
        problem: (value) => (options.map(String).includes(value) ? undefined : t("variables.choose_value")),
      };
    }
    if (property.format === "data-url") {
      return {
        render: (value, onChange) => (
          <Box>
            <Button variant="outlined" component="label">
              {t("variables.choose_png")}
              <input
                hidden
                type="file"
                accept="image/png"
                aria-label={t("variables.choose_png")}
                onChange={(event) => {
                  const file = event.target.files?.[0];
                  if (file) void readDataUrl(file).then(onChange);
                }}
              />
            </Button>
            <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
              {value ? t("variables.file_chosen", { size: Math.round(value.length / 1024) }) : help}
            </Typography>
          </Box>
        ),
        problem: (value) => fileVariableProblem(value),
      };
    }
    if (property.type === "integer" || property.type === "number") {
      return {
        render: (value, onChange) => (
          <TextField
            label={t("variables.value")}
            value={value}
            helperText={help}
            onChange={(event) => onChange(event.target.value)}
            slotProps={{ htmlInput: { inputMode: "numeric" } }}
          />
        ),
        problem: (value) => integerProblem(value, property, t),
      };
    }
    return {
      render: (value, onChange) => (
        <TextField
          label={t("variables.value")}
          value={value}
          helperText={help}
          onChange={(event) => onChange(event.target.value)}
        />
      ),
    };
  };
}
