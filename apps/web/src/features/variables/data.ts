import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useSdk } from "../../app-services.tsx";
import type { Sdk } from "../../lib/sdk.ts";
import { pineOf } from "../orgs/data.ts";
import { ALL_SERVICES_ID, type StoredVariable, type VariableWriter } from "./staged.ts";
import type { InheritedVariable } from "./variables-editor.tsx";

/**
 * The variable resources of spec 2 §3/§7 and how the editors read and write them. A stored row's
 * key is `{resource}:{id}`, so one editor can hold rows of two resources (fleet-wide and
 * per-service, device-wide and device-service).
 */

type Row = { id: number; name: string; value: string };
const VARIABLE_FIELDS = ["id", "name", "value"];

const stored = (resource: string, rows: Row[], serviceOf: (row: Row) => number = () => ALL_SERVICES_ID) =>
  rows.map((row): StoredVariable => ({ ...row, key: `${resource}:${row.id}`, serviceId: serviceOf(row) }));

const resourceOf = (row: StoredVariable) => row.key.slice(0, row.key.indexOf(":"));

function patchAndDelete(sdk: Sdk): Pick<VariableWriter, "update" | "remove"> {
  return {
    update: (row, value) => pineOf(sdk).patch({ resource: resourceOf(row), id: row.id, body: { value } }),
    remove: (row) => pineOf(sdk).delete({ resource: resourceOf(row), id: row.id }),
  };
}

export interface Service {
  id: number;
  name: string;
}

export function useFleetServices(fleetId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    // A failed load is a danger toast (spec 2 §8), not the error page.
    meta: { reportErrors: true },
    queryKey: ["fleet", fleetId, "services"],
    enabled: fleetId !== undefined,
    queryFn: async () =>
      (
        await pineOf(sdk).get<Array<{ id: number; service_name: string }>>({
          resource: "service",
          options: {
            $select: ["id", "service_name"],
            $filter: { application: fleetId },
            $orderby: { service_name: "asc" },
          },
        })
      ).map((service): Service => ({ id: service.id, name: service.service_name })),
  });
}

/** Fleet-wide and per-service environment variables of a fleet. */
export function useFleetEnvVars(fleetId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    // A failed load is a danger toast (spec 2 §8), not the error page.
    meta: { reportErrors: true },
    queryKey: ["fleet", fleetId, "envvars"],
    enabled: fleetId !== undefined,
    queryFn: async () => {
      const [fleetWide, perService] = await Promise.all([
        pineOf(sdk).get<Row[]>({
          resource: "application_environment_variable",
          options: { $select: VARIABLE_FIELDS, $filter: { application: fleetId }, $orderby: { name: "asc" } },
        }),
        pineOf(sdk).get<Array<Row & { service: { __id: number } }>>({
          resource: "service_environment_variable",
          options: {
            $select: [...VARIABLE_FIELDS, "service"],
            $filter: { service: { $any: { $alias: "s", $expr: { s: { application: fleetId } } } } },
            $orderby: { name: "asc" },
          },
        }),
      ]);
      return [
        ...stored("application_environment_variable", fleetWide),
        ...stored(
          "service_environment_variable",
          perService,
          (row) => (row as (typeof perService)[number]).service.__id,
        ),
      ];
    },
  });
}

export function fleetEnvWriter(sdk: Sdk, fleetId: number): VariableWriter {
  return {
    create: (change) =>
      change.serviceId === ALL_SERVICES_ID
        ? pineOf(sdk).post({
            resource: "application_environment_variable",
            body: { application: fleetId, name: change.name, value: change.value },
          })
        : pineOf(sdk).post({
            resource: "service_environment_variable",
            body: { service: change.serviceId, name: change.name, value: change.value },
          }),
    ...patchAndDelete(sdk),
  };
}

export function useFleetConfigVars(fleetId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    // A failed load is a danger toast (spec 2 §8), not the error page.
    meta: { reportErrors: true },
    queryKey: ["fleet", fleetId, "configvars"],
    enabled: fleetId !== undefined,
    queryFn: async () =>
      stored(
        "application_config_variable",
        await pineOf(sdk).get<Row[]>({
          resource: "application_config_variable",
          options: { $select: VARIABLE_FIELDS, $filter: { application: fleetId }, $orderby: { name: "asc" } },
        }),
      ),
  });
}

export function fleetConfigWriter(sdk: Sdk, fleetId: number): VariableWriter {
  return {
    create: (change) =>
      pineOf(sdk).post({
        resource: "application_config_variable",
        body: { application: fleetId, name: change.name, value: change.value },
      }),
    ...patchAndDelete(sdk),
  };
}

/** A device's own environment variables (device-wide and per service install). */
export function useDeviceEnvVars(deviceId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    // A failed load is a danger toast (spec 2 §8), not the error page.
    meta: { reportErrors: true },
    queryKey: ["device-vars", deviceId, "env"],
    enabled: deviceId !== undefined,
    queryFn: async () => {
      const [deviceWide, perService, installs] = await Promise.all([
        pineOf(sdk).get<Row[]>({
          resource: "device_environment_variable",
          options: { $select: VARIABLE_FIELDS, $filter: { device: deviceId }, $orderby: { name: "asc" } },
        }),
        pineOf(sdk).get<Array<Row & { service_install: { __id: number } }>>({
          resource: "device_service_environment_variable",
          options: {
            $select: [...VARIABLE_FIELDS, "service_install"],
            $filter: { service_install: { $any: { $alias: "si", $expr: { si: { device: deviceId } } } } },
            $orderby: { name: "asc" },
          },
        }),
        deviceServiceInstalls(sdk, deviceId ?? 0),
      ]);
      const serviceOfInstall = new Map(installs.map((install) => [install.id, install.serviceId]));
      return {
        stored: [
          ...stored("device_environment_variable", deviceWide),
          ...stored(
            "device_service_environment_variable",
            perService,
            (row) => serviceOfInstall.get((row as (typeof perService)[number]).service_install.__id) ?? ALL_SERVICES_ID,
          ),
        ],
        installs,
      };
    },
  });
}

async function deviceServiceInstalls(sdk: Sdk, deviceId: number) {
  const rows = await pineOf(sdk).get<Array<{ id: number; installs__service: { __id: number } }>>({
    resource: "service_install",
    options: { $select: ["id", "installs__service"], $filter: { device: deviceId } },
  });
  return rows.map((row) => ({ id: row.id, serviceId: row.installs__service.__id }));
}

export function deviceEnvWriter(
  sdk: Sdk,
  deviceId: number,
  installs: Array<{ id: number; serviceId: number }>,
): VariableWriter {
  return {
    create: (change) => {
      if (change.serviceId === ALL_SERVICES_ID) {
        return pineOf(sdk).post({
          resource: "device_environment_variable",
          body: { device: deviceId, name: change.name, value: change.value },
        });
      }
      const install = installs.find((row) => row.serviceId === change.serviceId);
      if (!install) return Promise.reject(new Error("The service is not installed on this device"));
      return pineOf(sdk).post({
        resource: "device_service_environment_variable",
        body: { service_install: install.id, name: change.name, value: change.value },
      });
    },
    ...patchAndDelete(sdk),
  };
}

export function useDeviceConfigVars(deviceId: number | undefined) {
  const sdk = useSdk();
  return useQuery({
    // A failed load is a danger toast (spec 2 §8), not the error page.
    meta: { reportErrors: true },
    queryKey: ["device-vars", deviceId, "config"],
    enabled: deviceId !== undefined,
    queryFn: async () =>
      stored(
        "device_config_variable",
        await pineOf(sdk).get<Row[]>({
          resource: "device_config_variable",
          options: { $select: VARIABLE_FIELDS, $filter: { device: deviceId }, $orderby: { name: "asc" } },
        }),
      ),
  });
}

export function deviceConfigWriter(sdk: Sdk, deviceId: number): VariableWriter {
  return {
    create: (change) =>
      pineOf(sdk).post({
        resource: "device_config_variable",
        body: { device: deviceId, name: change.name, value: change.value },
      }),
    ...patchAndDelete(sdk),
  };
}

export const asInherited = (rows: readonly StoredVariable[] | undefined): InheritedVariable[] =>
  (rows ?? []).map((row) => ({ name: row.name, value: row.value, serviceId: row.serviceId }));

export interface DeviceOverride {
  id: number;
  name: string;
  value: string;
  device: { uuid: string; device_name: string };
}

/** Device-level values of a fleet's variables (the overrides counted per fleet variable, spec 2 §3). */
export function useDeviceOverrides(fleetId: number | undefined, kind: "env" | "config") {
  const sdk = useSdk();
  const resource = kind === "env" ? "device_environment_variable" : "device_config_variable";
  return useQuery({
    // A failed load is a danger toast (spec 2 §8), not the error page.
    meta: { reportErrors: true },
    queryKey: ["fleet", fleetId, "overrides", kind],
    enabled: fleetId !== undefined,
    queryFn: async () => {
      const rows = await pineOf(sdk).get<Array<Row & { device: Array<{ uuid: string; device_name: string }> }>>({
        resource,
        options: {
          $select: VARIABLE_FIELDS,
          $filter: { device: { $any: { $alias: "d", $expr: { d: { belongs_to__application: fleetId } } } } },
          $expand: { device: { $select: ["uuid", "device_name"] } },
          $orderby: { name: "asc" },
        },
      });
      return rows.flatMap((row): DeviceOverride[] => {
        const device = row.device[0];
        return device ? [{ id: row.id, name: row.name, value: row.value, device }] : [];
      });
    },
  });
}

/** Refetches a page's variables after a batch was applied. */
export function useRefetchVariables() {
  const queryClient = useQueryClient();
  return async () => {
    await queryClient.invalidateQueries({ queryKey: ["fleet"] });
    await queryClient.invalidateQueries({ queryKey: ["device-vars"] });
  };
}
