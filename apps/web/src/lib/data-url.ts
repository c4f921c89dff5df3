import { toDataUrl } from "@flotilla/domain";

/** Uploaded files as data URLs of type, name and base64 parts (spec 1 §5; packages/domain data-url.ts). */
export { type DataUrlParts, parseDataUrl, toDataUrl } from "@flotilla/domain";

function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(binary);
}

/** A picked file as such a data URL. */
export async function fileToDataUrl(file: Blob & { name: string }): Promise<string> {
  const base64 = bytesToBase64(new Uint8Array(await file.arrayBuffer()));
  return toDataUrl({ type: file.type, name: file.name, base64 });
}
