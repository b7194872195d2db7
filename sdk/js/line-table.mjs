// Appends to a rolldown bundle the table that maps its lines back to the author's files, so a
// stack frame inside the component (`run@bundle.js:414:2`) can be shown as `app.js:12`
// (guild-sdk's exports.js reads it as `globalThis.__guildLines`; docs/kits.md, "Errors that
// name what to fix"). One entry per bundle line: the source and line of the line's first
// mapped position, or 0. Sources are named relative to the plugin folder.
//
//   node sdk/js/line-table.mjs BUNDLE.js BUNDLE.js.map PLUGIN_DIR
import { appendFileSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, relative, resolve } from "node:path";

const [bundle, mapFile, pluginDir] = process.argv.slice(2);
const payload = JSON.parse(readFileSync(mapFile, "utf8"));
const map = new SourceMap(payload);
const sources = payload.sources.map((s) => relative(pluginDir, resolve(dirname(mapFile), s)));
const lines = readFileSync(bundle, "utf8").split("\n");
const table = lines.map((text, i) => {
  const entry = map.findEntry(i, text.search(/\S|$/));
  if (entry.generatedLine !== i || entry.originalSource === undefined) return 0;
  const source = payload.sources.indexOf(entry.originalSource);
  const index = source >= 0 ? source : sources.indexOf(relative(pluginDir, entry.originalSource));
  return index >= 0 ? [index, entry.originalLine + 1] : 0;
});
appendFileSync(bundle, `\nglobalThis.__guildLines = ${JSON.stringify({ sources, lines: table })};\n`);
