import { useSyncExternalStore } from "react";

/**
 * The support drawer's state, shared by the header's help button and the pages that open it: open
 * or not, which view (home, the ticket form, a ticket), and the organization picked for private
 * support (kept while the drawer is closed).
 */
export type DrawerView = { name: "home" } | { name: "create" } | { name: "ticket"; id: number };

export interface DrawerState {
  open: boolean;
  view: DrawerView;
  orgId: number | undefined;
  /** The ticket just created: the home view says so once. */
  created: { id: number; subject: string } | undefined;
}

let state: DrawerState = { open: false, view: { name: "home" }, orgId: undefined, created: undefined };
const listeners = new Set<() => void>();

function set(next: Partial<DrawerState>) {
  state = { ...state, ...next };
  for (const listener of listeners) listener();
}

export const supportDrawer = {
  open: (view: DrawerView = { name: "home" }) => set({ open: true, view }),
  close: () => set({ open: false, view: { name: "home" }, created: undefined }),
  show: (view: DrawerView) => set({ view, ...(view.name === "home" ? {} : { created: undefined }) }),
  pickOrganization: (orgId: number) => set({ orgId }),
  created: (ticket: { id: number; subject: string }) => set({ view: { name: "home" }, created: ticket }),
  get: () => state,
  subscribe: (listener: () => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

export const useSupportDrawer = () => useSyncExternalStore(supportDrawer.subscribe, supportDrawer.get);
