/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/config@0.3.0' {
  /**
   * The value of a granted key; `denied` for a key that was not both requested and granted.
   */
  export function get(key: string): string;
  export type HostError = import('guild:plugin/types@0.3.0').HostError;
}
