/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/tools@0.3.0' {
  /**
   * The tools this specialist may call.
   */
  export function granted(): Array<GrantedTool>;
  /**
   * Calls `connector.tool` with a JSON input document. A mutating call may carry an
   * idempotency key: the same key with the same input returns the recorded outcome without
   * calling the connector again; the same key with a different input is refused.
   */
  export function call(name: string, input: string, idempotencyKey: string | undefined): ToolOutcome;
  export type ToolSpec = import('guild:plugin/types@0.3.0').ToolSpec;
  export type ToolOutcome = import('guild:plugin/types@0.3.0').ToolOutcome;
  export type HostError = import('guild:plugin/types@0.3.0').HostError;
  /**
   * A granted tool, as `connector.tool`, with its spec.
   */
  export interface GrantedTool {
    name: string,
    spec: ToolSpec,
  }
}
