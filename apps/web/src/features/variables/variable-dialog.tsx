import Alert from "@mui/material/Alert";
import Autocomplete from "@mui/material/Autocomplete";
import MenuItem from "@mui/material/MenuItem";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { FormDialog } from "../../components/form-dialog.tsx";
import { ALL_SERVICES_ID } from "./staged.ts";
import type { Editing, VariablesEditorProps } from "./variables-editor.tsx";

/** The variables editor's add, edit and override dialog (variables-editor.tsx loads it when opened). */
export function VariableDialog(props: {
  editing: Editing;
  services: Array<{ id: number; name: string }>;
  taken: (serviceId: number) => string[];
  nameProblem: VariablesEditorProps["nameProblem"];
  nameNotice?: VariablesEditorProps["nameNotice"];
  suggestions?: string[];
  valueField?: VariablesEditorProps["valueField"];
  onSave: (name: string, value: string, serviceId: number) => void;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const editing = props.editing;
  const initial =
    editing.mode === "edit"
      ? { name: editing.row.name, value: editing.row.value, serviceId: editing.row.serviceId }
      : editing.mode === "override"
        ? { name: editing.inherited.name, value: editing.inherited.value, serviceId: editing.inherited.serviceId }
        : { name: "", value: "", serviceId: ALL_SERVICES_ID };
  const [name, setName] = useState(initial.name);
  const [value, setValue] = useState(initial.value);
  const [serviceId, setServiceId] = useState(initial.serviceId);
  const [touched, setTouched] = useState(false);
  const nameLocked = editing.mode !== "add";
  const nameProblem = nameLocked ? undefined : props.nameProblem(name.trim(), props.taken(serviceId));
  const field = props.valueField?.(name.trim());
  const valueProblem = field?.problem?.(value);
  const submit = () => {
    setTouched(true);
    if (nameProblem || valueProblem) return;
    props.onSave(name.trim(), value, serviceId);
  };
  const title =
    editing.mode === "add"
      ? t("variables.add_title")
      : editing.mode === "override"
        ? t("variables.override_title", { name: initial.name })
        : t("variables.edit_title", { name: initial.name });
  return (
    <FormDialog
      maxWidth="sm"
      title={title}
      submitLabel={t("variables.stage")}
      onSubmit={submit}
      onClose={props.onClose}
    >
      <Stack spacing={2} sx={{ pt: 1 }}>
        <Autocomplete
          freeSolo
          disabled={nameLocked}
          options={props.suggestions ?? []}
          inputValue={name}
          onInputChange={(_event, next) => setName(next)}
          renderInput={(params) => (
            <TextField
              {...params}
              label={t("variables.name")}
              autoFocus={!nameLocked}
              error={touched && nameProblem !== undefined}
              helperText={touched ? nameProblem : undefined}
              slotProps={{ ...params.slotProps, htmlInput: { ...params.slotProps.htmlInput, spellCheck: false } }}
            />
          )}
        />
        {props.services.length > 0 && editing.mode === "add" ? (
          <TextField
            select
            label={t("variables.service")}
            value={serviceId}
            onChange={(event) => setServiceId(Number(event.target.value))}
          >
            <MenuItem value={ALL_SERVICES_ID}>{t("variables.all_services")}</MenuItem>
            {props.services.map((service) => (
              <MenuItem key={service.id} value={service.id}>
                {service.name}
              </MenuItem>
            ))}
          </TextField>
        ) : null}
        {field?.render ? (
          field.render(value, setValue)
        ) : (
          <TextField
            label={t("variables.value")}
            value={value}
            autoFocus={nameLocked}
            multiline
            maxRows={8}
            onChange={(event) => setValue(event.target.value)}
            error={touched && valueProblem !== undefined}
            helperText={touched ? valueProblem : undefined}
            slotProps={{ htmlInput: { spellCheck: false } }}
          />
        )}
        {field?.render && touched && valueProblem ? <Alert severity="error">{valueProblem}</Alert> : null}
        {!nameLocked && props.nameNotice?.(name.trim()) ? (
          <Alert severity="info">{props.nameNotice(name.trim())}</Alert>
        ) : null}
      </Stack>
    </FormDialog>
  );
}
