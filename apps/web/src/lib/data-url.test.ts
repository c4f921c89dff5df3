import { describe, expect, it } from "vitest";
import { fileToDataUrl, parseDataUrl, toDataUrl } from "./data-url.ts";

describe("data URLs of uploaded files", () => {
  it("are made of type, name and base64 parts", () => {
    expect(toDataUrl({ type: "image/png", name: "logo v2.png", base64: "iVBORw0=" })).toBe(
      "data:image/png;name=logo%20v2.png;base64,iVBORw0=",
    );
    expect(parseDataUrl("data:image/png;name=logo%20v2.png;base64,iVBORw0=")).toEqual({
      type: "image/png",
      name: "logo v2.png",
      base64: "iVBORw0=",
    });
    expect(parseDataUrl("data:text/plain;base64,aGk=")).toBeUndefined();
  });

  it("encode a picked file", async () => {
    const file = new File(["hello"], "greeting.txt", { type: "text/plain" });
    expect(await fileToDataUrl(file)).toBe("data:text/plain;name=greeting.txt;base64,aGVsbG8=");
    const untyped = new File([new Uint8Array([0, 255])], "blob.bin");
    expect(await fileToDataUrl(untyped)).toBe("data:application/octet-stream;name=blob.bin;base64,AP8=");
  });
});
