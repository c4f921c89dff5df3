import { describe, expect, it } from "vitest";
import { preferredOrganization } from "./create-dialog.tsx";

describe("the create dialog's organization", () => {
  const administered = [3, 7, 9]; // alphabetical order: 3 first

  it("is the page's organization, else the one last worked in, not the alphabetically first", () => {
    expect(preferredOrganization(administered, undefined, 7, 9)).toBe(7);
    expect(preferredOrganization(administered, undefined, undefined, 9)).toBe(9);
    expect(preferredOrganization(administered, 3, 7, 9)).toBe(3);
  });

  it("skips organizations the user does not administer", () => {
    expect(preferredOrganization(administered, undefined, 5, 9)).toBe(9);
    expect(preferredOrganization(administered, undefined, undefined, 0)).toBe(3);
    expect(preferredOrganization([], undefined, 7, 9)).toBeUndefined();
  });
});
