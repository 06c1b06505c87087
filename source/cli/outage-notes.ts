import type { OutageListener } from "../../engine/index.js";
import type { Output } from "./output.js";
import { clean } from "../text/plain.js";

/**
 * What a follower (`events --follow`, `start --wait`) says as the store stops answering and as it
 * answers again, rather than exiting on the first failure: `meanwhile`, what it does till then.
 */
export function outageNotes(out: Output, meanwhile: string, after: string): OutageListener {
  return (error) => out.note(error ? `${clean(error.message)}; ${meanwhile}` : `the store answers again; ${after}`);
}
