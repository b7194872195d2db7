// The checked-in TypeScript types in wit/ are what the pinned jco generates from the WIT: a
// change to wit/*.wit must regenerate them (the command is in the failure message).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const sdk = fileURLToPath(new URL("..", import.meta.url));
const js = join(sdk, "..");
const jco = join(js, "node_modules", ".bin", "jco");
const WORLDS = ["specialist", "connector", "skill-loader"];

function files(dir, prefix = "") {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(dir, join(prefix, e.name)) : [join(prefix, e.name)],
  );
}

test("wit/ matches jco guest-types of the WIT", () => {
  assert.ok(existsSync(jco), `jco is not installed: run sdk/js/setup.sh (looked for ${jco})`);
  const out = mkdtempSync(join(tmpdir(), "guild-wit-types-"));
  try {
    for (const world of WORLDS) {
      execFileSync(jco, ["guest-types", join(js, "..", "..", "wit"), "-n", world, "-o", out], { stdio: "pipe" });
    }
    const fresh = files(out).sort();
    assert.deepEqual(files(join(sdk, "wit")).sort(), fresh, "the set of generated files changed");
    for (const f of fresh) {
      assert.equal(
        readFileSync(join(sdk, "wit", f), "utf8"),
        readFileSync(join(out, f), "utf8"),
        `sdk/js/guild-sdk/wit/${f} is stale: regenerate with ` +
          "(cd sdk/js && for w in specialist connector skill-loader; do ./node_modules/.bin/jco guest-types ../../wit -n $w -o guild-sdk/wit; done)",
      );
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
