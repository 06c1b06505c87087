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

it("gives DEADLINE a column from 120 columns, when a row of the queue has a deadline, wide enough for its decision past due", () => {
  const rows = [asked("run-aaaaaaaaaa", "Ship it?"), { ...asked("run-bbbbbbbbbb", "Roll back?"), deadline: { at: 0, decision: "reject" } }];
  // `reject (due 1h59m ago)`
  expect(queueColumns(120, rows, question)).toMatchObject({ deadline: 22 });
  expect(queueColumns(119, rows, question)).toMatchObject({ deadline: 0 });
  expect(queueColumns(60, rows, question)).toMatchObject({ deadline: 0 });
  expect(queueColumns(160, rows.slice(0, 1), question)).toMatchObject({ deadline: 0 });
});
