/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/skill-loader-api@0.3.0' {
  /**
   * The catalog.
   */
  export function list(): Array<SkillMeta>;
  /**
   * The body (`SKILL.md`) of one skill.
   */
  export function load(name: string): string;
  /**
   * One resource file of a skill, by path relative to the skill folder.
   */
  export function read(name: string, path: string): Uint8Array;
  export type HostError = import('guild:plugin/types@0.3.0').HostError;
  export type SkillMeta = import('guild:plugin/types@0.3.0').SkillMeta;
}
