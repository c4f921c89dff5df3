import { type SeatOffer, type SeatUsage, seatOffer } from "@flotilla/domain";
import { useQuery } from "@tanstack/react-query";
import type { TFunction } from "i18next";
import { useServices } from "../../app-services.tsx";
import { type Addon, billingApi } from "../billing/api.ts";

/** Seats by role ("administrator", "developer"…) from the billing usage's `member:{role}` add-ons. */
export type SeatsByRole = Readonly<Record<string, SeatUsage>>;

export function seatsByRole(addons: readonly Addon[]): SeatsByRole {
  const out: Record<string, SeatUsage> = {};
  for (const addon of addons) {
    if (!addon.item.startsWith("member:")) continue;
    out[addon.item.slice("member:".length)] = {
      included: addon.included,
      used: addon.used,
      unitPriceCents: addon.unit_price_cents,
    };
  }
  return out;
}

/**
 * The organization's seats on its plan, for the role pickers (spec 3 §6). Only those with billing
 * access may read the usage: for anyone else (or when it fails) the pickers show list prices.
 */
export function useSeats(orgId: number | undefined): SeatsByRole | undefined {
  const { sdk, config } = useServices();
  const seats = useQuery({
    // Under the organization's key: adding or removing a member refreshes it with the lists.
    queryKey: ["orgs", orgId, "seats"],
    enabled: orgId !== undefined,
    meta: { handlesErrors: true },
    throwOnError: false,
    retry: false,
    queryFn: async () => seatsByRole((await billingApi(sdk, config.apiUrl).getUsage(orgId ?? 0)).addons ?? []),
  });
  return seats.data;
}

/** The offer for one more member at `role` (list price in cents) with the organization's seats. */
export const offerFor = (role: string, listPriceCents: number, seats: SeatsByRole | undefined): SeatOffer =>
  seatOffer(listPriceCents, seats?.[role]);

/** A role option's price: "Free", "$49 per member / month", or what its included seats say. */
export function offerText(t: TFunction, offer: SeatOffer): string {
  switch (offer.kind) {
    case "free":
      return t("orgs.price_free");
    case "priced":
      return t("orgs.price_per_member", { price: offer.priceCents / 100 });
    case "included":
      return t("orgs.seats_included", { used: offer.used, included: offer.included });
    case "extra":
      return t("orgs.seats_all_used", { count: offer.included, price: offer.priceCents / 100 });
  }
}
