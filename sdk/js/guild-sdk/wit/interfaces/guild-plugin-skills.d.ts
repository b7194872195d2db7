/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/skills@0.3.0' {
  /**
   * Name and description of every skill visible to this specialist.
   */
  export function catalog(): Array<SkillMeta>;
  /**
   * The body of one skill (frontmatter stripped) with a listing of its resource files.
   */
  export function load(name: string): string;
  /**
   * One resource file of a skill, by path relative to the skill folder.
   */
  export function read(name: string, path: string): Uint8Array;
  export type HostError = import('guild:plugin/types@0.3.0').HostError;
  export type SkillMeta = import('guild:plugin/types@0.3.0').SkillMeta;
}
