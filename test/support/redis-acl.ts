import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";

const README = join(import.meta.dirname, "..", "..", "README.md");

/**
 * The arguments of the README's `ACL SETUSER` command (under "Redis permissions"), as the shell
 * would pass them, for a user `name` with `password` whose keys match `keys` instead of the
 * README's placeholders: the tests run as exactly the user the README tells people to make.
 */
export function readmeAcl(name: string, password: string, keys: string): string[] {
  const readme = readFileSync(README, "utf8");
  const section = readme.slice(readme.indexOf("**Redis permissions**"));
  const line = /^redis-cli ACL SETUSER .*$/m.exec(section)?.[0];
  if (!line) throw new Error("README.md has no `redis-cli ACL SETUSER` line under **Redis permissions**");
  const words = line.split(/\s+/).slice(3).map((word) => word.replace(/^'(.*)'$/, "$1").replace(/\\\|/g, "|"));
  const placeholders: Record<string, string> = { pitwall: name, ">CHANGE-ME": `>${password}`, "~pitwall:*": `~${keys}` };
  for (const placeholder of Object.keys(placeholders)) if (!words.includes(placeholder)) throw new Error(`the README's ACL SETUSER has no ${placeholder}`);
  return words.map((word) => placeholders[word] ?? word);
}

/** Makes the README's user on the server at `port` (as its default user). */
export async function addReadmeUser(port: number, name: string, password: string, keys: string): Promise<void> {
  const admin = new Redis({ port, host: "127.0.0.1", lazyConnect: true });
  await admin.connect();
  try {
    await admin.call("ACL", "SETUSER", ...readmeAcl(name, password, keys));
  } finally {
    admin.disconnect();
  }
}
