// Stack frames shown in the author's files: inside a component every frame is a line of the
// bundle (`run@bundle.js:414:2`), which the table sdk/js/componentize.sh appends maps back to
// the author's file and line (sdk/js/line-table.mjs; docs/kits.md, "Errors that name what to
// fix"). Used for a run's or a tool's uncaught error and for a refused tool call's caller.

/**
 * `stack` with the component's bundle positions (`run@bundle.js:414:2`) shown as the author's
 * files and lines (`run@app.js:12`), from the table sdk/js/componentize.sh appends to the bundle
 * (sdk/js/line-table.mjs). Unchanged outside a component (plain Node already names the files).
 */
export function authorStack(stack) {
  const table = globalThis.__guildLines;
  if (!table || typeof stack !== "string") return stack;
  return stack.replace(/[^@\s]*bundle\.js:(\d+):\d+/g, (whole, line) => {
    const at = table.lines[Number(line) - 1];
    return at ? `${table.sources[at[0]]}:${at[1]}` : whole;
  });
}

// Where one frame points: `fn@FILE:LINE:COL` (SpiderMonkey, inside a component) or
// `    at fn (FILE:LINE:COL)` / `    at FILE:LINE:COL` (V8, under Node).
function frameLocation(frame) {
  const v8 = frame.match(/^\s*at (?:.*\()?(.*?)\)?$/);
  return (v8 ? v8[1] : frame.slice(frame.lastIndexOf("@") + 1)).trim();
}

// The SDK's own modules (directly in guild-sdk/, its tests excluded), the unmapped bundle, the
// componentize-js glue and Node's internals: not the author's code.
const NOT_THE_AUTHORS = /guild-sdk\/[\w.-]+\.js:\d+(:\d+)?$|bundle\.js|initializer\.js|^node:/;

/** ` (at app.js:12)`: the first frame of `e`'s stack in the author's own files, if any. */
export function authorFrame(e) {
  const own = authorStack(e?.stack ?? "")
    .split("\n")
    .map(frameLocation)
    .find((at) => /:\d+$/.test(at) && !NOT_THE_AUTHORS.test(at));
  return own ? ` (at ${own.replace(/^file:\/\//, "").replace(/:(\d+):\d+$/, ":$1")})` : "";
}
