/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/memory@0.3.0' {
  /**
   * Reads `scope`'s document; `denied` without the `SCOPE:read` right.
   */
  export function read(scope: Scope): Document;
  /**
   * Replaces `scope`'s document with `text` (merge and curate; never append blindly).
   */
  export function update(scope: Scope, text: string): UpdateResult;
  export type HostError = import('guild:plugin/types@0.3.0').HostError;
  /**
   * Which document: the workspace's shared one, or the user's own.
   * # Variants
   * 
   * ## `"team"`
   * 
   * ## `"private"`
   */
  export type Scope = 'team' | 'private';
  /**
   * A document's size against the limits, in characters.
   */
  export interface Usage {
    chars: number,
    /**
     * Above it, a warning to consolidate.
     */
    softLimit: number,
    /**
     * Above it, the write is refused.
     */
    limit: number,
  }
  /**
   * A document as read: its newest version.
   */
  export interface Document {
    /**
     * The markdown text (empty when nothing was stored yet).
     */
    text: string,
    /**
     * The newest version number; 0 when nothing was stored yet.
     */
    version: bigint,
    usage: Usage,
  }
  /**
   * What an accepted update did.
   */
  export type UpdateOutcome = UpdateOutcomeStored | UpdateOutcomeNoOp;
  /**
   * A new version was stored; its number.
   */
  export interface UpdateOutcomeStored {
    tag: 'stored',
    val: bigint,
  }
  /**
   * Nothing changed (a sentinel such as `NO_UPDATE`, an empty text, or the stored text
   * itself); why.
   */
  export interface UpdateOutcomeNoOp {
    tag: 'no-op',
    val: string,
  }
  /**
   * An accepted update, with what the writer should know.
   */
  export interface UpdateResult {
    outcome: UpdateOutcome,
    /**
     * Accepted, but worth acting on (consolidate, possible data loss, odd bullets, ...).
     */
    warnings: Array<string>,
    /**
     * The stored document's size against the limits.
     */
    usage: Usage,
  }
  /**
   * A write the validator refused; the stored version is unchanged.
   */
  export interface Refusal {
    /**
     * Every rule the text broke, as the protocol words it.
     */
    errors: Array<string>,
    /**
     * The refused text's size against the limits.
     */
    usage: Usage,
  }
  /**
   * Why an update did not happen.
   */
  export type UpdateError = UpdateErrorRefused | UpdateErrorHost;
  /**
   * The text broke the memory rules.
   */
  export interface UpdateErrorRefused {
    tag: 'refused',
    val: Refusal,
  }
  /**
   * The update could not run: `denied` without the `SCOPE:write` right, `limit-exceeded`
   * at the task's call limit, `failed` when no workspace/user is named or the store failed.
   */
  export interface UpdateErrorHost {
    tag: 'host',
    val: HostError,
  }
}
