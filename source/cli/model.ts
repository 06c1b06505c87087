import { ModelError, modelFromEnv, type ModelProvider } from "../../engine/index.js";
import { UsageError } from "./errors.js";

/** The model the environment names, checked now: both a script and a server, or a script that cannot be read, is refused. */
export function modelOfEnvironment(): ModelProvider | undefined {
  try {
    return modelFromEnv();
  } catch (error) {
    if (error instanceof ModelError) throw new UsageError(error.message);
    throw error;
  }
}
