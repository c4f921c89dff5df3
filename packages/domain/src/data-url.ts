/**
 * Uploaded files travel as data URLs made of the type, the name and the base64 content
 * (spec 1 §5): `data:<type>;name=<url-encoded name>;base64,<content>`. The dashboard makes them,
 * the server reads them (an organization's logo sent with its creation).
 */
export interface DataUrlParts {
  type: string;
  name: string;
  base64: string;
}

export function toDataUrl({ type, name, base64 }: DataUrlParts): string {
  return `data:${type || "application/octet-stream"};name=${encodeURIComponent(name)};base64,${base64}`;
}

export function parseDataUrl(url: string): DataUrlParts | undefined {
  const match = /^data:([^;,]*);name=([^;,]*);base64,([A-Za-z0-9+/]*={0,2})$/.exec(url);
  if (!match) return undefined;
  try {
    return { type: match[1] ?? "", name: decodeURIComponent(match[2] ?? ""), base64: match[3] ?? "" };
  } catch {
    return undefined;
  }
}
