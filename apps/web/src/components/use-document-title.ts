import { useEffect } from "react";
import { setDocumentTitle } from "./document-title.ts";

/** "Fleets · Flotilla" in the browser tab. */
export function useDocumentTitle(title: string) {
  useEffect(() => setDocumentTitle(title), [title]);
}
