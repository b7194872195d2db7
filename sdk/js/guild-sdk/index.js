// guild-sdk: write Guild plugins in JavaScript or TypeScript. Build with sdk/js/componentize.sh;
// unit-test under Node with `guild-sdk/testing`.
export * from "./errors.js";
export { Report, ToolOutcome } from "./report.js";
export { config, http, log, memory, progress, skills, tools, installBindings } from "./host.js";
export { connector, field, runTool, skillLoader, specialist } from "./exports.js";
export * as agent from "./agent.js";
export * as llm from "./llm.js";
export { sha256Hex } from "./sha256.js";
