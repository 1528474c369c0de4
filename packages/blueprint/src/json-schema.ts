/** The blueprint JSON Schema, generated from the zod schema so editors can complete blueprints. */
import { z } from "zod";
import { blueprintSchema } from "./schema.js";

export function blueprintJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(blueprintSchema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
}
