/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/delegate@0.3.0' {
  /**
   * The specialists this plugin may delegate to (requested and granted).
   */
  export function specialists(): Array<string>;
  /**
   * Runs one child task to its end under the host's dispatch and returns its validated
   * report; a review of it is then pending.
   */
  export function run(brief: TaskBrief): ChildReport;
  /**
   * Reviews the report of `child-id`; the host checks the decision against the matrix and
   * the batch rules and says what follows.
   */
  export function review(childId: string, review: TaskReview): ReviewEffect;
  export type Report = import('guild:plugin/types@0.3.0').Report;
  /**
   * What a parent asks of a child. The host trims it, de-duplicates its lists and adds the
   * `task` validation scope before it runs; the child receives it rendered as its
   * description.
   */
  export interface TaskBrief {
    /**
     * The specialist to run; one the parent's `delegate` grant names.
     */
    specialist: string,
    /**
     * What the child is to achieve (at most 4,000 characters).
     */
    objective: string,
    /**
     * Why the parent needs it (at most 1,000 characters).
     */
    reason: string,
    /**
     * How the child knows it is done: 1 to 32, each at most 1,000 characters.
     */
    completionCriteria: Array<string>,
    /**
     * What the child should hand back (at most 32).
     */
    expectedOutputs: Array<string>,
    /**
     * What the parent found so far that the child should know (at most 16,000 characters).
     */
    parentFindings: string,
    /**
     * Anything else the child needs: it sees nothing of its parent's thread (at most
     * 16,000 characters).
     */
    context: string,
    /**
     * Every constraint of the root anchor and of the parent (compared normalized), plus any
     * the parent adds; a constraint may never be dropped.
     */
    constraints: Array<string>,
    /**
     * Context the child may read, by reference: only what the parent holds and is granted
     * on (`memory:team`, `memory:private`, `task:ID` of the parent or one of its children).
     */
    contextRefs: Array<string>,
    /**
     * Validations the child's report goes through, `[a-z_]{1,32}`; `task` is always one.
     */
    validationScopes: Array<string>,
  }
  /**
   * One check's status, best to worst.
   * # Variants
   * 
   * ## `"passed"`
   * 
   * ## `"unknown"`
   * 
   * ## `"failed"`
   * 
   * ## `"error"`
   */
  export type CheckStatus = 'passed' | 'unknown' | 'failed' | 'error';
  /**
   * One check the host ran on the child's report.
   */
  export interface Check {
    name: string,
    status: CheckStatus,
    message: string,
  }
  /**
   * What the parent may decide about a child's report (the decision matrix).
   * # Variants
   * 
   * ## `"accept-refine"`
   * 
   * Take the child's own suggested next task as the next action.
   * ## `"reject-refine"`
   * 
   * Drop the child's suggestion; the parent's plan stands.
   * ## `"revise-child"`
   * 
   * The same child continues with the feedback (no new child slot).
   * ## `"descend-again"`
   * 
   * Start a new direct child (the review carries its brief).
   * ## `"ascend"`
   * 
   * The parent's current goal is complete.
   * ## `"replan-current"`
   * 
   * Reopen the goal of the child's direct parent.
   * ## `"fail"`
   * 
   * The parent's current goal failed.
   */
  export type Decision = 'accept-refine' | 'reject-refine' | 'revise-child' | 'descend-again' | 'ascend' | 'replan-current' | 'fail';
  /**
   * What a child spent, charged to it and to every ancestor.
   */
  export interface Usage {
    wallMs: bigint,
    toolCalls: bigint,
    tokens: bigint,
  }
  /**
   * A finished child, after the host validated its report. A review is now pending: until
   * the parent calls `review`, its only other calls are context reads.
   */
  export interface ChildReport {
    /**
     * The child's task id (its receipts carry it).
     */
    childId: string,
    /**
     * The report as validated: the child's own, or the one the host wrote when the child
     * broke the report protocol or failed (outcome `failed`).
     */
    report: Report,
    /**
     * Whether the report is the host's (the child failed, timed out or broke the protocol).
     */
    protocolError: boolean,
    /**
     * Why the child failed, when it did.
     */
    error?: string,
    /**
     * The worst check status.
     */
    verdict: CheckStatus,
    checks: Array<Check>,
    /**
     * The decisions the matrix allows for this verdict and outcome.
     */
    allowed: Array<Decision>,
    usage: Usage,
  }
  /**
   * The parent's answer to a child's report.
   */
  export interface TaskReview {
    decision: Decision,
    /**
     * Why (for `revise-child`, what the child should change); at most 4,000 characters.
     */
    reason: string,
    /**
     * `descend-again` only: the new child's brief. No other decision carries one
     * (`accept-refine` takes the child's own suggestion).
     */
    nextTask?: TaskBrief,
  }
  /**
   * What the host does with an accepted review.
   */
  export type ReviewEffect = ReviewEffectTakeSuggestion | ReviewEffectKeepPlan | ReviewEffectContinueChild | ReviewEffectNewChild | ReviewEffectReopenParentGoal | ReviewEffectCompleteParentGoal | ReviewEffectFailParentGoal;
  /**
   * `accept-refine`: this brief is the next action; the next `run` must be exactly it.
   */
  export interface ReviewEffectTakeSuggestion {
    tag: 'take-suggestion',
    val: TaskBrief,
  }
  /**
   * `reject-refine`: nothing to run; the plan stands.
   */
  export interface ReviewEffectKeepPlan {
    tag: 'keep-plan',
  }
  /**
   * `revise-child`: the next `run` must be the child's brief again; the same child (same
   * id, no new slot) continues with this feedback and its earlier reports.
   */
  export interface ReviewEffectContinueChild {
    tag: 'continue-child',
    val: string,
  }
  /**
   * `descend-again`: this brief is the next action; the next `run` must be exactly it.
   */
  export interface ReviewEffectNewChild {
    tag: 'new-child',
    val: TaskBrief,
  }
  /**
   * `replan-current`: the goal of the child's direct parent (the caller) is reopened.
   */
  export interface ReviewEffectReopenParentGoal {
    tag: 'reopen-parent-goal',
  }
  /**
   * `ascend`: the caller's current goal is complete.
   */
  export interface ReviewEffectCompleteParentGoal {
    tag: 'complete-parent-goal',
  }
  /**
   * `fail`: the caller's current goal failed.
   */
  export interface ReviewEffectFailParentGoal {
    tag: 'fail-parent-goal',
  }
  /**
   * A brief that broke a rule.
   */
  export interface BriefRefused {
    /**
     * The rule: `field`, `specialist`, `constraints`, `context-refs`, `validation-scope`
     * or `not-as-approved` (an approved next task dispatched differently).
     */
    rule: string,
    /**
     * The field it concerns.
     */
    field: string,
    /**
     * The host's message, naming rule and field.
     */
    message: string,
  }
  /**
   * A review the host refused.
   */
  export interface ReviewRefused {
    /**
     * The host's message, naming what was wrong.
     */
    message: string,
    /**
     * The decisions the matrix allows for the report under review.
     */
    allowed: Array<Decision>,
  }
  /**
   * Which tree budget a refused call would exceed.
   * # Variants
   * 
   * ## `"tasks"`
   * 
   * ## `"tool-calls"`
   * 
   * ## `"tokens"`
   * 
   * ## `"wall-ms"`
   */
  export type BudgetKind = 'tasks' | 'tool-calls' | 'tokens' | 'wall-ms';
  /**
   * A call refused because a budget of the tree is spent.
   */
  export interface BudgetExceeded {
    budget: BudgetKind,
    /**
     * What was left.
     */
    limit: bigint,
    /**
     * What the call asked for.
     */
    used: bigint,
  }
  /**
   * Why a delegation or review did not happen. Each text names what was wrong and where.
   */
  export type DelegateError = DelegateErrorDenied | DelegateErrorBriefRefused | DelegateErrorReviewRefused | DelegateErrorBudgetExceeded | DelegateErrorTooDeep | DelegateErrorTooManyChildren | DelegateErrorReviewPending | DelegateErrorNoPendingReview | DelegateErrorCancelled | DelegateErrorChildFailed;
  /**
   * `delegate` was not requested or not granted; the text names plugin and capability.
   */
  export interface DelegateErrorDenied {
    tag: 'denied',
    val: string,
  }
  export interface DelegateErrorBriefRefused {
    tag: 'brief-refused',
    val: BriefRefused,
  }
  export interface DelegateErrorReviewRefused {
    tag: 'review-refused',
    val: ReviewRefused,
  }
  export interface DelegateErrorBudgetExceeded {
    tag: 'budget-exceeded',
    val: BudgetExceeded,
  }
  /**
   * The child would sit below the tree's deepest level (`[delegate] max_depth`).
   */
  export interface DelegateErrorTooDeep {
    tag: 'too-deep',
    val: string,
  }
  /**
   * The caller started as many children as allowed (`[delegate] max_children`).
   */
  export interface DelegateErrorTooManyChildren {
    tag: 'too-many-children',
    val: string,
  }
  /**
   * A child's report waits for the caller's review; `run` is refused until then.
   */
  export interface DelegateErrorReviewPending {
    tag: 'review-pending',
    val: string,
  }
  /**
   * `review` named a child with no report waiting for review.
   */
  export interface DelegateErrorNoPendingReview {
    tag: 'no-pending-review',
    val: string,
  }
  /**
   * The task was cancelled.
   */
  export interface DelegateErrorCancelled {
    tag: 'cancelled',
    val: string,
  }
  /**
   * The child could not start (unknown or unavailable specialist, the host is full).
   */
  export interface DelegateErrorChildFailed {
    tag: 'child-failed',
    val: string,
  }
}
