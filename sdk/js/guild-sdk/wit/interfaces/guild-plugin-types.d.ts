declare module 'guild:plugin/types@0.3.0' {
  /**
   * Whether a tool call must be approved by the caller before it runs.
   * # Variants
   * 
   * ## `"never"`
   * 
   * ## `"always"`
   */
  export type Approval = 'never' | 'always';
  /**
   * What a connector says about one of its tools.
   */
  export interface ToolSpec {
    /**
     * Tool name, unique within the connector: `[a-z0-9_]{1,64}`.
     */
    name: string,
    /**
     * One paragraph that tells a model when to use the tool.
     */
    description: string,
    /**
     * JSON Schema of the input object, as a JSON document.
     */
    inputSchema: string,
    /**
     * True when the call changes something outside the plugin; the host writes a receipt.
     */
    mutating: boolean,
    /**
     * Receipt type for mutating tools: issue, message, page, file, ...
     */
    receiptType?: string,
    /**
     * Receipt operation for mutating tools: create, update, delete, send, post, write, ...
     */
    operation?: string,
    /**
     * A skill the caller must have loaded before this tool answers.
     */
    requiresSkill?: string,
    approval: Approval,
  }
  /**
   * Status of a tool call as the connector reports it.
   */
  export type CallStatus = CallStatusSuccess | CallStatusPending | CallStatusFailed;
  /**
   * Committed in the external system.
   */
  export interface CallStatusSuccess {
    tag: 'success',
  }
  /**
   * Started, not finished; resolved later.
   */
  export interface CallStatusPending {
    tag: 'pending',
  }
  /**
   * Did not happen; the text, kept verbatim in the receipt, says why.
   */
  export interface CallStatusFailed {
    tag: 'failed',
    val: string,
  }
  /**
   * Facts a connector reports about one call. The host, never the plugin, turns them into a
   * receipt. A failed call carries its error in `status`, so an outcome cannot be both a
   * success and an error.
   */
  export interface ToolOutcome {
    /**
     * Output for the caller, as a JSON document.
     */
    output: string,
    status: CallStatus,
    /**
     * Identifier in the external system (issue number, message id, ...).
     */
    externalId?: string,
    /**
     * A public URL where the effect can be checked.
     */
    verifiableUrl?: string,
    /**
     * Short human-readable preview of what changed.
     */
    preview?: string,
  }
  /**
   * Why a host call was refused or failed. Guest-visible: a plugin can act on it.
   */
  export type HostError = HostErrorDenied | HostErrorInvalidInput | HostErrorLimitExceeded | HostErrorFailed;
  /**
   * The capability was not requested or not granted. The text names plugin, capability and target.
   */
  export interface HostErrorDenied {
    tag: 'denied',
    val: string,
  }
  /**
   * The input was malformed (bad URL, bad JSON, unknown tool, ...).
   */
  export interface HostErrorInvalidInput {
    tag: 'invalid-input',
    val: string,
  }
  /**
   * A size or time limit was hit.
   */
  export interface HostErrorLimitExceeded {
    tag: 'limit-exceeded',
    val: string,
  }
  /**
   * The operation was allowed but failed (network error, the tool's plugin trapped, ...).
   */
  export interface HostErrorFailed {
    tag: 'failed',
    val: string,
  }
  /**
   * Why a progress report was not delivered.
   */
  export type ProgressError = ProgressErrorParentGone | ProgressErrorDenied | ProgressErrorLimitExceeded;
  /**
   * The task's direct parent is not live (cancelled, session closed): nobody will read
   * the report. The run goes on; later reports fail the same way.
   */
  export interface ProgressErrorParentGone {
    tag: 'parent-gone',
  }
  /**
   * Progress reports were not granted to this plugin. The text names plugin and capability.
   */
  export interface ProgressErrorDenied {
    tag: 'denied',
    val: string,
  }
  /**
   * The report is too large, or the task sent too many reports.
   */
  export interface ProgressErrorLimitExceeded {
    tag: 'limit-exceeded',
    val: string,
  }
  /**
   * The work handed to a specialist. It carries all context: the specialist sees nothing else.
   */
  export interface Brief {
    /**
     * Host-assigned task id.
     */
    taskId: string,
    /**
     * The self-contained task description.
     */
    description: string,
  }
  /**
   * What a specialist says about itself.
   */
  export interface SpecialistInfo {
    /**
     * One-line description shown in the roster.
     */
    description: string,
  }
  /**
   * How the specialist judges its own work. The host validates it; it is a hypothesis.
   * # Variants
   * 
   * ## `"satisfied"`
   * 
   * ## `"partial"`
   * 
   * ## `"failed"`
   */
  export type Outcome = 'satisfied' | 'partial' | 'failed';
  /**
   * What the specialist suggests the orchestrator do next.
   * # Variants
   * 
   * ## `"stop"`
   * 
   * Nothing more to do.
   * ## `"descend"`
   * 
   * Break the work down further (needs a suggested task).
   * ## `"refine"`
   * 
   * Redo part of it more narrowly (needs a suggested task).
   * ## `"ascend"`
   * 
   * Hand back to the parent.
   */
  export type NextAction = 'stop' | 'descend' | 'refine' | 'ascend';
  /**
   * A next-step suggestion.
   */
  export interface NextStep {
    action: NextAction,
    /**
     * The brief of the suggested task.
     */
    suggestedTask?: string,
  }
  /**
   * A file or document the specialist produced, resolvable by the host.
   */
  export interface ArtifactRef {
    /**
     * Path or id within the task's workspace.
     */
    id: string,
    /**
     * Kind: file, document, page, ...
     */
    kind: string,
    /**
     * MIME type.
     */
    mimeType: string,
    /**
     * Hex sha256 of the content.
     */
    sha256: string,
    /**
     * The version of the artifact in the system that holds it (a page revision, a commit,
     * a document version), when it has one.
     */
    version?: string,
  }
  /**
   * An external effect the specialist claims to have caused.
   */
  export interface Claim {
    /**
     * The tool that caused it, `connector.tool`.
     */
    tool: string,
    /**
     * The external id the tool returned.
     */
    externalId?: string,
    /**
     * Free text of what was claimed.
     */
    text: string,
  }
  /**
   * The specialist's final report.
   */
  export interface Report {
    /**
     * One paragraph: what was done.
     */
    summary: string,
    outcome: Outcome,
    /**
     * Markdown details for the caller.
     */
    details: string,
    /**
     * True when every hard requirement of the brief was checked and met.
     */
    hardPassed: boolean,
    /**
     * Problems found in this task and not resolved.
     */
    openIssues: Array<string>,
    /**
     * Problems known to remain beyond this task's scope.
     */
    remainingIssues: Array<string>,
    /**
     * Suggested next step.
     */
    nextStep?: NextStep,
    artifacts: Array<ArtifactRef>,
    claims: Array<Claim>,
  }
  /**
   * One entry of a skill loader's catalog.
   */
  export interface SkillMeta {
    /**
     * Skill name, equal to its folder name.
     */
    name: string,
    /**
     * What the skill is for and when to use it.
     */
    description: string,
  }
  /**
   * Why a run failed as a whole.
   */
  export type RunError = RunErrorInvalidBrief | RunErrorFailed;
  /**
   * The brief cannot be acted on; the text says what is missing.
   */
  export interface RunErrorInvalidBrief {
    tag: 'invalid-brief',
    val: string,
  }
  /**
   * The work failed.
   */
  export interface RunErrorFailed {
    tag: 'failed',
    val: string,
  }
}
