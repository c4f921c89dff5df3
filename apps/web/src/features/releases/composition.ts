import { stringify } from "yaml";

/**
 * The release's composition as docker-compose YAML; undefined when there is none; throws when
 * it is not a composition (errors.could_not_parse_composition_data).
 */
export function compositionYaml(composition: unknown): string | undefined {
  if (composition === null || composition === undefined || composition === "") return undefined;
  const value = typeof composition === "string" ? JSON.parse(composition) : composition;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error("composition is not an object");
  }
  if (Object.keys(value).length === 0) return undefined;
  return stringify(value, { lineWidth: 0 });
}
