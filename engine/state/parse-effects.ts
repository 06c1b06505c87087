import type { z } from "zod";

/**
 * What a zod schema in code may do to a value as it parses it, beyond checking it. State is
 * checked, not parsed, as nodes write it and operators edit it (against its JSON Schema form), and
 * only a run's input is parsed: a schema that changes values would hold one form from the input
 * and another from every write, and one that never fails (`.catch`) would let any write through.
 */
export const PARSE_EFFECTS = ["preprocess", "transform", "codec", "catch", "overwrite", "coerce", "refinement"] as const;
export type ParseEffect = (typeof PARSE_EFFECTS)[number];

/** Why each effect is refused, and what to give instead: the message of the state key's problem (the first of PARSE_EFFECTS a schema has). */
export const PARSE_EFFECT_PROBLEMS: Readonly<Record<ParseEffect, string>> = {
  preprocess: "a preprocess changes values as they are parsed, but state is checked, not parsed, as nodes write it: give the plain type, and shape the value in the node that writes it",
  transform: "a transform changes values as they are parsed, but state is checked, not parsed, as nodes write it: give the plain type, and shape the value in the node that writes it",
  codec:
    'a codec (z.stringbool(), z.codec()) decodes values as they are parsed: a run\'s input "false" would become false, while a node\'s write and an operator\'s edit are checked as the codec\'s input (a string), not decoded, and stored as given: give the type the state holds (z.boolean() for z.stringbool()), and decode the value in the node that writes it',
  catch:
    "a .catch() puts its fallback in place of an invalid value as values are parsed, so every write would pass its check and be stored as written: give the plain type (with .default() for a missing value), and let an invalid write be refused",
  overwrite:
    "a .trim(), .toLowerCase(), .toUpperCase(), .normalize() or .overwrite() rewrites values as they are parsed, but state is checked, not parsed, as nodes write it: a run's input would be rewritten and a node's write stored as written; check the form instead (.lowercase(), .uppercase(), .regex(/^\\S(.*\\S)?$/) for trimmed) and shape the value in the node that writes it",
  coerce:
    'z.coerce converts values as they are parsed (a run\'s input "5" becomes 5), but state is checked, not parsed, as nodes write it: a node\'s "5" would pass and be stored as a string; give the plain type (z.number(), z.boolean(), ...), and convert the value in the node that writes it',
  refinement:
    "a refinement (.refine, .superRefine, .check) is code, and the state's checks are stored as JSON Schema, which operators' edits are checked against too: give the rule as a schema (.min, .max, .regex, z.enum, ...), or check the value in the node that writes it",
};

/**
 * The effect of one zod schema node (not of those inside it), if it has one. Zod builds pipes
 * from transforms itself from JSON Schema (for `propertyNames`): only schemas written in code are
 * asked about.
 */
export function parseEffectOf(schema: z.core.$ZodType): ParseEffect | undefined {
  const def = schema._zod.def as z.core.$ZodTypeDef & { in?: z.core.$ZodType; transform?: unknown; coerce?: boolean };
  if (def.type === "pipe" && def.transform !== undefined) return "codec";
  // z.preprocess() is a pipe from a transform, which the input form skips over silently.
  if (def.type === "pipe" && def.in?._zod.def.type === "transform") return "preprocess";
  if (def.type === "catch") return "catch";
  if (def.coerce === true) return "coerce";
  const checks = def.checks?.map((check) => check._zod.def.check) ?? [];
  if (checks.includes("overwrite")) return "overwrite";
  if (checks.includes("custom")) return "refinement";
  return undefined;
}
