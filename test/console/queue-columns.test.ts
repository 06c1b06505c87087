import { expect, it } from "vitest";
import type { InterruptRecord } from "../../engine/index.js";
import { queueColumns } from "../../source/console/views/queue-columns.js";

const asked = (runId: string, question: string): InterruptRecord => ({
  id: `int-${runId}`,
  runId,
  taskId: null,
  node: "execute",
  step: 1,
  kind: "node",
  request: { question, decisions: ["approve", "reject"] },
  status: "pending",
  resolution: null,
  createdAt: 0,
});
const question = (i: InterruptRecord) => i.request.question ?? "";

it("on a narrow screen brings the run back when questions differ only past where they are cut", () => {
  const start = "About to delete up to 5 rows from the table";
  const rows = [asked("run-aaaaaaaaaa", `${start} users`), asked("run-bbbbbbbbbb", `${start} orders`)];
  expect(queueColumns(70, rows, question)).toMatchObject({ run: 0, values: 0 });
  expect(queueColumns(60, rows, question)).toMatchObject({ run: 14, values: 0 });
  // 80 columns and more show every column, whatever the rows.
  expect(queueColumns(80, rows, question)).toMatchObject({ run: 14, valuesFirst: false });
});
