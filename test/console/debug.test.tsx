import { it } from "vitest";
import { fixture, settle } from "./fixtures.js";
import { openConsole } from "./harness.js";

it("debug", async () => {
  const fx = fixture();
  const r = await settle(fx.engine, "travel-planner");
  const ui = await openConsole({ store: fx.store, readOnly: true });
  await ui.waitFor(r.id);
  console.log(JSON.stringify(ui.lines()));
  ui.unmount();
  await fx.close();
});
