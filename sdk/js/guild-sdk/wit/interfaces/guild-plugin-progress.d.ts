/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/progress@0.3.0' {
  /**
   * Sends one report; returns its stable message id.
   */
  export function send(output: string): string;
  export type ProgressError = import('guild:plugin/types@0.3.0').ProgressError;
}
