// The hand-written .d.ts files type-check a TypeScript plugin (test/example.ts) with the pinned
// TypeScript compiler from sdk/js's toolchain.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const tsc = join(here, "..", "..", "node_modules", ".bin", "tsc");

test("a TypeScript plugin type-checks against the SDK's types", () => {
  assert.ok(existsSync(tsc), `tsc is not installed: run sdk/js/setup.sh (looked for ${tsc})`);
  try {
    execFileSync(tsc, ["-p", join(here, "tsconfig.json")], { stdio: "pipe" });
  } catch (e) {
    assert.fail(`tsc found errors:\n${e.stdout}${e.stderr}`);
  }
});
