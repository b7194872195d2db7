/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/specialist-api@0.3.0' {
  /**
   * What the specialist says about itself (called once, at load).
   */
  export function describe(): SpecialistInfo;
  /**
   * Does the work of one brief, in a fresh instance.
   */
  export function run(brief: Brief): Report;
  export type Brief = import('guild:plugin/types@0.3.0').Brief;
  export type Report = import('guild:plugin/types@0.3.0').Report;
  export type RunError = import('guild:plugin/types@0.3.0').RunError;
  export type SpecialistInfo = import('guild:plugin/types@0.3.0').SpecialistInfo;
}
