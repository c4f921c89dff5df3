import { fleetNameProblem } from "@flotilla/domain";
import { describe, expect, it } from "vitest";
import { ADJECTIVES, NAME_SUGGESTION_ATTEMPTS, NOUNS, suggestName } from "./name-suggestion.ts";

describe("suggestName", () => {
  it("suggests an adjective-noun pair that passes the fleet name rules", () => {
    const name = suggestName([]);
    const [adjective, noun] = name.split("-");
    expect(ADJECTIVES).toContain(adjective);
    expect(NOUNS).toContain(noun);
    expect(fleetNameProblem(name)).toBeUndefined();
  });

  it("draws each word from a range of 4096 folded onto the list", () => {
    // random() = 0.5 → 2048; 2048 % 100 = 48 for both lists.
    expect(suggestName([], () => 0.5)).toBe(`${ADJECTIVES[2048 % ADJECTIVES.length]}-${NOUNS[2048 % NOUNS.length]}`);
  });

  it("retries while the name is taken, case-insensitively", () => {
    const values = [0, 0, 0, 0, 0.5, 0.5];
    const random = () => values.shift() ?? 0.5;
    const first = `${ADJECTIVES[0]}-${NOUNS[0]}`;
    expect(suggestName([first.toUpperCase()], random)).toBe(`${ADJECTIVES[48]}-${NOUNS[48]}`);
  });

  it("gives up after 500 attempts", () => {
    let calls = 0;
    const random = () => {
      calls++;
      return 0;
    };
    const taken = [`${ADJECTIVES[0]}-${NOUNS[0]}`];
    expect(suggestName(taken, random)).toBe(taken[0]);
    expect(calls).toBe(NAME_SUGGESTION_ATTEMPTS * 2);
  });
});
