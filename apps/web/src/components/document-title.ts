/** "Fleets · Flotilla" in the browser tab. */
export function setDocumentTitle(title: string) {
  document.title = title ? `${title} · Flotilla` : "Flotilla";
}
