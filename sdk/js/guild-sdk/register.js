// Lets plain Node resolve `import ... from "guild-sdk"` to this folder without an npm install:
//   node --import ./sdk/js/guild-sdk/register.js --test plugins/my-plugin/
// (A plugin outside this repository can `npm install path/to/sdk/js/guild-sdk` instead.)
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`
const root = ${JSON.stringify(new URL("./", import.meta.url).href)};
export async function resolve(specifier, context, next) {
  if (specifier === "guild-sdk") return { url: root + "index.js", shortCircuit: true };
  if (specifier === "guild-sdk/testing") return { url: root + "testing.js", shortCircuit: true };
  return next(specifier, context);
}`),
);
