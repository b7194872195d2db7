/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/connector-api@0.3.0' {
  /**
   * The tools this connector offers (called once, at load).
   */
  export function tools(): Array<ToolSpec>;
  /**
   * Runs one tool with a JSON input document, in a fresh instance. A failure is an outcome
   * whose status is `failed`.
   */
  export function call(tool: string, input: string): ToolOutcome;
  export type ToolSpec = import('guild:plugin/types@0.3.0').ToolSpec;
  export type ToolOutcome = import('guild:plugin/types@0.3.0').ToolOutcome;
}
