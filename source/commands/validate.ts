import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { plural } from "../text/plain.js";
import { checkWorkflowFile, errorsOf, problemLines } from "../cli/workflow-file.js";

export const validate = defineCommand({
  name: "validate",
  usage: "validate <workflow.json> [--actions MODULE ...]",
  summary: "check a workflow file: every problem, one per line",
  details: `Prints "<json path>: <CODE>: <message>" for each problem (warnings are marked) and exits 2
when there is an error. With --actions (or actions in the config file), actions the
modules do not export are UNKNOWN_ACTION errors.
--json prints { "file", "valid", "version", "problems": [{ "path", "code", "message", "severity" }] }.`,
  flags: { actions: { type: "string", isMultiple: true } },
  args: { min: 1, max: 1 },
  async run({ args, flags, out, actions }) {
    const file = args[0]!;
    const checked = checkWorkflowFile(file, await actions(flags.actions));
    const valid = errorsOf(checked.problems).length === 0;
    if (out.json) {
      out.value({ file, valid, version: checked.version ?? null, problems: checked.problems });
    } else {
      for (const line of problemLines(checked.problems)) out.line(line);
      if (valid) {
        const nodes = Object.keys(checked.definition?.nodes ?? {}).length;
        out.line(`${file}: valid workflow ${checked.definition?.name} (version ${checked.version}, ${plural(nodes, "node")})`);
      }
    }
    return valid ? EXIT.ok : EXIT.usage;
  },
});
