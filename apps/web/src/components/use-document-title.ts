import { useEffect } from "react";

/** "Fleets · Flotilla" in the browser tab. */
export function useDocumentTitle(title: string) {
  useEffect(() => {
    document.title = title ? `${title} · Flotilla` : "Flotilla";
  }, [title]);
}
