import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliHarness, workflowOf } from "../support/cli.js";

/** An address of this machine that is not a loopback one (a password sent there crosses a network). */
function outsideAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === "IPv4");
  return found?.address ?? "10.255.255.1";
}

describe("pitwall: store URLs keep their passwords out of messages", () => {
  const cli = cliHarness();

  it("a URL that does not parse is named with its user information masked, with a hint, as bad input (env, flag, config file, --json)", async () => {
    const url = "redis://:Sup3r#Secret@10.0.0.5:6379";
    const config = join(cli.dir, "with-store.json");
    writeFileSync(config, JSON.stringify({ store: url }));
    const results = await Promise.all([
      cli.run(["worker", "--once"], { PITWALL_STORE: url }),
      cli.run(["runs", "--store", url]),
      cli.run(["runs", "--config", config], { PITWALL_STORE: "" }),
      cli.run(["runs", "--json"], { PITWALL_STORE: url }),
    ]);
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stderr).not.toMatch(/Sup3r|Secret/);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    }
    expect(results[0]!.stderr).toBe(
      'pitwall worker: store URL redis://***@10.0.0.5:6379 holds "#", which a URL cannot hold there: percent-encode special characters in the user and password (% as %25, # as %23, / as %2F, ? as %3F, @ as %40, : in the user as %3A, a space as %20)\n',
    );
    expect(JSON.parse(results[3]!.stderr).error).toMatchObject({ command: "runs", code: "VALIDATION", exitCode: 2, message: expect.stringContaining("redis://***@10.0.0.5:6379") });
  });

  it("a password that is not valid percent-encoding is bad input naming the store, not 'URI malformed'", async () => {
    const r = await cli.run(["worker", "--once", "--json"], { PITWALL_STORE: "redis://u:secret%ZZpw@127.0.0.1" });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("secret");
    expect(JSON.parse(r.stderr.trimEnd().split("\n").at(-1)!).error).toMatchObject({
      code: "VALIDATION",
      message: expect.stringMatching(/^store URL redis:\/\/u:\*\*\*@127\.0\.0\.1: its password has a "%" not followed by two hex digits: percent-encode/),
    });
  });

  it("warns once, on stderr, when a password goes over plain redis:// to another machine; not to this one", async () => {
    const host = outsideAddress();
    const away = await cli.run(["runs"], { PITWALL_STORE: `redis://app:hunter2@${host}:1/0` });
    const lines = away.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(
      `warning: the store URL redis://app:***@${host}:1/0 sends its password unencrypted (redis://) to ${host}: anyone on the network between can read it; use rediss:// (TLS) to reach another machine`,
    );
    expect(lines.filter((l) => l.startsWith("warning: the store URL"))).toHaveLength(1);
    expect(away.stderr).not.toContain("hunter2");
    const here = await cli.run(["runs"], { PITWALL_STORE: "redis://app:hunter2@127.0.0.1:1/0" });
    expect(here.stderr).not.toContain("warning");
    expect(here.stderr).toContain("redis://app:***@127.0.0.1:1/0");
  });
});

describe("pitwall: a config file's actions are code the command runs", () => {
  const cli = cliHarness();
  const folder = mkdtempSync(join(tmpdir(), "pitwall-config-"));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("says which config file named the actions modules it loads, on stderr (not under --json)", async () => {
    const marker = join(folder, "ran.txt");
    writeFileSync(join(folder, "evil.mjs"), `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "ran"); export default {};\n`);
    writeFileSync(join(folder, "pitwall.config.json"), JSON.stringify({ actions: ["./evil.mjs"] }));
    const r = await cli.run(["worker", "--once"], {}, { cwd: folder });
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n")[0]).toBe(`config ${join(folder, "pitwall.config.json")}: loading its actions ${join(folder, "evil.mjs")}`);
    expect(readFileSync(marker, "utf8")).toBe("ran");
    const quiet = await cli.run(["worker", "--once", "--json"], {}, { cwd: folder });
    expect(quiet.stderr).not.toContain("loading its actions");
    const flagged = await cli.run(["worker", "--once", "--actions", join(folder, "evil.mjs")], {}, { cwd: folder });
    expect(flagged.stderr).not.toContain("loading its actions");
    expect(existsSync(marker)).toBe(true);
  });
});

describe("pitwall start: an input nested past the depth limit", () => {
  const cli = cliHarness();

  it("is bad input, one line naming the input and its depth, and no run is made", async () => {
    const file = join(cli.dir, "deep.json");
    writeFileSync(file, `{"destination":${'{"x":'.repeat(5_000)}1${"}".repeat(5_000)}}`);
    const r = await cli.run(["start", workflowOf("travel-planner"), "--input", `@${file}`, "--json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr).error).toMatchObject({
      code: "VALIDATION",
      message: "run input nests objects and arrays 5000 levels deep (at $.destination.x.x.x…); state holds values at most 256 levels deep",
    });
    expect(r.stdout).toBe("");
  });
});

describe("pitwall: names of secrets added by PITWALL_SECRET_KEYS or the config file's secretKeys", () => {
  const cli = cliHarness();

  it("hide the values of an operator's edits in the events, from either", async () => {
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto"}']);
    const env = await cli.run(["edit", runId, "--set", "destination=Lisbon-by-env", "--reason", "moved"], { PITWALL_SECRET_KEYS: "origin, destination" });
    expect(env.code).toBe(0);
    const config = join(cli.dir, "secret-keys.json");
    writeFileSync(config, JSON.stringify({ secretKeys: ["destination"] }));
    const file = await cli.run(["edit", runId, "--set", "destination=Faro-by-config", "--config", config]);
    expect(file.code).toBe(0);
    const events = (await cli.run(["events", runId, "--json"])).stdout;
    expect(events).toContain("operator.requested");
    expect(events).toContain("state.edited");
    expect(events).not.toMatch(/Lisbon-by-env|Faro-by-config/);
    expect(JSON.parse((await cli.run(["state", runId, "--json"])).stdout).destination).toBe("Faro-by-config");
  });
});
