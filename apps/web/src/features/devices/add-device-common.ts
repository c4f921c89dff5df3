import type { TFunction } from "i18next";
import type { ReactNode } from "react";
import type { Fleet } from "../fleet-access/data.ts";
import type { ExpiryChoice } from "../preferences/api-key-expiry.ts";

/** What the add-device dialog's two ways (flotilla-agent, balenaOS) share. */
export type AddDeviceCommon = {
  fleet: Fleet;
  /** The chosen device type's slug. */
  deviceType: string;
  /** The provisioning key's expiry. */
  expiry: ExpiryChoice;
  /** The device type and operating system choices, first in the dialog. */
  header: ReactNode;
  /** The provisioning key's expiry select (disabled once a key is shown). */
  expirySelect: (disabled: boolean) => ReactNode;
  onClose: () => void;
};

/** The name of the provisioning key a download creates. */
export const provisioningKeyName = (t: TFunction) =>
  t("devices.add.key_name", { date: new Date().toISOString().slice(0, 10) });

/**
 * The device type the dialog starts with: the fleet's, when it is in the readable list. Without
 * it (unknown, or not readable) the dialog says errors.could_not_detect_device_type (spec 2 §8).
 */
export function detectedDeviceType<T extends { slug: string }>(
  types: readonly T[] | undefined,
  slug: string | undefined,
): { type: T } | { error: "errors.could_not_detect_device_type" } | undefined {
  if (types === undefined) return undefined;
  const type = slug === undefined ? undefined : types.find((candidate) => candidate.slug === slug);
  return type ? { type } : { error: "errors.could_not_detect_device_type" };
}
