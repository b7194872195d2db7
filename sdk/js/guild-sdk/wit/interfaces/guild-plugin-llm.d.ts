declare module 'guild:plugin/llm@0.3.0' {
  /**
   * The model aliases this plugin may use (requested and granted).
   */
  export function models(): Array<string>;
  /**
   * One chat completion.
   */
  export function complete(request: Request): Answer;
  /**
   * A tool call the model asked for.
   */
  export interface ToolCall {
    /**
     * The model's id for the call; the tool message that answers it carries the same id.
     */
    id: string,
    /**
     * The tool's name, as offered in `request.tools`.
     */
    name: string,
    /**
     * The arguments as the model wrote them: a JSON document, not checked by the host.
     */
    arguments: string,
  }
  /**
   * An assistant turn, as the model answered it (sent back in the next request).
   */
  export interface AssistantTurn {
    content?: string,
    toolCalls: Array<ToolCall>,
  }
  /**
   * The answer to one tool call, sent to the model.
   */
  export interface ToolResult {
    /**
     * The `tool-call.id` this answers.
     */
    callId: string,
    content: string,
  }
  /**
   * One message of the conversation.
   */
  export type Message = MessageSystem | MessageUser | MessageAssistant | MessageTool;
  export interface MessageSystem {
    tag: 'system',
    val: string,
  }
  export interface MessageUser {
    tag: 'user',
    val: string,
  }
  export interface MessageAssistant {
    tag: 'assistant',
    val: AssistantTurn,
  }
  export interface MessageTool {
    tag: 'tool',
    val: ToolResult,
  }
  /**
   * A tool the model may call.
   */
  export interface ToolDefinition {
    /**
     * `[a-zA-Z0-9_-]{1,64}`, as OpenAI-compatible endpoints require.
     */
    name: string,
    description: string,
    /**
     * The arguments' JSON Schema, as a JSON document.
     */
    parameters: string,
  }
  /**
   * One chat completion.
   */
  export interface Request {
    /**
     * A model alias the operator granted to this plugin.
     */
    model: string,
    messages: Array<Message>,
    tools: Array<ToolDefinition>,
    maxTokens?: number,
    temperature?: number,
    stop: Array<string>,
  }
  /**
   * Why the model stopped.
   * # Variants
   * 
   * ## `"stop"`
   * 
   * ## `"length"`
   * 
   * ## `"tool-calls"`
   * 
   * ## `"content-filter"`
   * 
   * ## `"other"`
   */
  export type FinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'other';
  /**
   * Tokens one call spent, as the endpoint counted them.
   */
  export interface Usage {
    promptTokens: number,
    completionTokens: number,
  }
  /**
   * The model's answer.
   */
  export interface Answer {
    content?: string,
    toolCalls: Array<ToolCall>,
    finishReason: FinishReason,
    usage: Usage,
  }
  /**
   * Which budget a refused call would have exceeded.
   * # Variants
   * 
   * ## `"task-tokens"`
   * 
   * The grant's tokens per task.
   * ## `"daily-tokens"`
   * 
   * The grant's tokens per day (UTC), across tasks and restarts.
   */
  export type Budget = 'task-tokens' | 'daily-tokens';
  /**
   * A call refused before any request because a budget is spent.
   */
  export interface BudgetExceeded {
    budget: Budget,
    /**
     * The budget, in tokens.
     */
    limit: bigint,
    /**
     * Tokens already spent against it.
     */
    used: bigint,
  }
  /**
   * The endpoint answered with an error.
   */
  export interface UpstreamError {
    /**
     * The HTTP status (0 when the endpoint could not be reached).
     */
    status: number,
    /**
     * The provider's message (secrets redacted).
     */
    message: string,
  }
  /**
   * Why a completion did not happen.
   */
  export type LlmError = LlmErrorDenied | LlmErrorModelNotGranted | LlmErrorBudgetExceeded | LlmErrorRateLimited | LlmErrorUpstream | LlmErrorTimeout | LlmErrorMalformedAnswer | LlmErrorInvalidRequest;
  /**
   * The `llm` capability was not requested or not granted; the text names plugin and capability.
   */
  export interface LlmErrorDenied {
    tag: 'denied',
    val: string,
  }
  /**
   * The alias is not granted to this plugin (or not configured); the text lists the granted ones.
   */
  export interface LlmErrorModelNotGranted {
    tag: 'model-not-granted',
    val: string,
  }
  export interface LlmErrorBudgetExceeded {
    tag: 'budget-exceeded',
    val: BudgetExceeded,
  }
  /**
   * The endpoint is rate limiting and the host's retries ran out; retry after this many ms, if it said.
   */
  export interface LlmErrorRateLimited {
    tag: 'rate-limited',
    val: bigint | undefined,
  }
  export interface LlmErrorUpstream {
    tag: 'upstream',
    val: UpstreamError,
  }
  /**
   * The task's deadline or the call's timeout passed before an answer.
   */
  export interface LlmErrorTimeout {
    tag: 'timeout',
    val: string,
  }
  /**
   * The endpoint's answer was not a chat completion; what was wrong with it.
   */
  export interface LlmErrorMalformedAnswer {
    tag: 'malformed-answer',
    val: string,
  }
  /**
   * The request was malformed (empty messages, a bad tool name or schema, too large).
   */
  export interface LlmErrorInvalidRequest {
    tag: 'invalid-request',
    val: string,
  }
}
