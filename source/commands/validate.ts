import { runsAtOnceText } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { plural } from "../text/plain.js";
import { STDIN, checkWorkflowFile, errorsOf, problemLines, warningsOf } from "../cli/workflow-file.js";

export const validate = defineCommand({
  name: "validate",
  usage: "validate <workflow.json | -> ... [--actions MODULE ...] [--strict]",
  summary: "check workflow files: every problem, one per line",
  details: `Prints "<file>:<line>:<column>: <json path>: <CODE>: <message>" for each problem (warnings
are marked; the line and column where the file has the path), then, for a file with errors,
"<file>: N errors, M warnings"; exits 2 when any file has an error. - reads the workflow from
standard input. --strict fails on warnings too. With --actions (or actions in the config file),
actions the modules do not export are UNKNOWN_ACTION errors.
--json prints { "file", "valid", "version", "problems": [{ "path", "code", "message", "severity",
"line"?, "column"? }] } per file, one per line.`,
  flags: { actions: { type: "string", isMultiple: true }, strict: { type: "boolean" } },
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  async run({ args, flags, out, actions }) {
    if (args.filter((f) => f === STDIN).length > 1) throw new UsageError("- (standard input) can be read once");
    const registry = await actions(flags.actions);
    let allValid = true;
    for (const file of args) {
      let checked;
      try {
        checked = checkWorkflowFile(file, registry);
      } catch (error) {
        // One file of several that cannot be read is reported, and the others still checked.
        if (args.length === 1 || !(error instanceof UsageError)) throw error;
        allValid = false;
        if (out.json) out.value({ file, valid: false, version: null, problems: [], error: error.message });
        else out.note(`pitwall validate: ${error.message}`);
        continue;
      }
      const label = file === STDIN ? "<stdin>" : file;
      const errors = errorsOf(checked.problems).length;
      const warnings = warningsOf(checked.problems).length;
      const valid = errors === 0 && !(flags.strict && warnings > 0);
      allValid &&= valid;
      if (out.json) {
        out.value({ file: label, valid, version: checked.version ?? null, problems: checked.problems });
        continue;
      }
      for (const line of problemLines(label, checked.problems)) out.line(line);
      if (!valid) {
        out.line(`${label}: ${plural(errors, "error")}, ${plural(warnings, "warning")}${errors === 0 ? " (--strict fails on warnings)" : ""}`);
      } else {
        const nodes = Object.keys(checked.definition?.nodes ?? {}).length;
        const atOnce = checked.definition && runsAtOnceText(checked.definition);
        out.line(`${label}: valid workflow ${checked.definition?.name} (version ${checked.version}, ${plural(nodes, "node")}${atOnce ? `, ${atOnce}` : ""}${warnings > 0 ? `; ${plural(warnings, "warning")}` : ""})`);
      }
    }
    return allValid ? EXIT.ok : EXIT.usage;
  },
});
