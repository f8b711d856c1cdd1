import type { LanguageModel, LanguageModelMiddleware, Tool, ToolSet } from 'ai'

export type ToolDefer = 'never' | 'always' | 'auto'
export declare const ToolDefer: Readonly<{ Never: 'never'; Always: 'always'; Auto: 'auto' }>

export type MetaToolName = 'tool_search' | 'tool_inspect' | 'tool_invoke' | 'tool_exec'
export declare const MetaToolName: Readonly<{
  Search: 'tool_search'
  Inspect: 'tool_inspect'
  Invoke: 'tool_invoke'
  Exec: 'tool_exec'
}>

export interface ToolApplyScope {
  readonly assistant?: unknown
  readonly mcpToolIds: ReadonlySet<string>
  readonly [key: string]: unknown
}

/**
 * What a request passes to `selectActive`/`selectActiveTools`: `mcpToolIds` may be any iterable
 * (an array, a Set); `applies` and `buildTool` then see it as a Set.
 */
export type ToolSelectScope = Omit<ToolApplyScope, 'mcpToolIds'> & { readonly mcpToolIds: Iterable<string> }

export interface ToolEntry {
  /** Wire name the model emits; unique in the registry. 1–128 of `[A-Za-z0-9_.-]`. */
  name: string
  /** 'web' | 'kb' | 'meta' | `mcp:${serverId}` | any string */
  namespace: string
  /** What the model sees for the namespace (e.g. 'mcp:Gmail'); defaults to `namespace`. */
  namespaceLabel?: string
  /** One-line summary used by tool_search (not what the model sees inline). */
  description: string
  defer: ToolDefer
  /**
   * AI SDK Tool, passed through untouched. Its `inputSchema` may be a Zod or AI SDK schema, a
   * plain JSON Schema object, or absent (an empty-object schema), as the reference accepts.
   */
  tool: Tool
  /** Pure and synchronous; a throw makes the entry inactive with one warning. */
  applies?(scope: ToolApplyScope): boolean
}

export interface ToolFilter {
  /** Case-insensitive substring of name, description, namespace or namespaceLabel. */
  query?: string
  /** Exact namespace or namespaceLabel. */
  namespace?: string
}

export interface SearchOptions {
  namespace?: string
  /** Default 5. */
  limit?: number
  /** Restrict results to these names. */
  names?: Iterable<string>
  mode?: 'bm25' | 'regex'
}

export interface SearchResult {
  name: string
  namespace: string
  description: string
  score: number
}

export interface ToolRegistryOptions {
  /** Where warnings go (default: console). */
  logger?: { warn(message: string): void }
}

export declare class ToolRegistry {
  constructor(options?: ToolRegistryOptions)
  /** Adds an entry; the same name overwrites. Throws a TypeError naming the bad field. */
  register(entry: ToolEntry): void
  deregister(name: string): boolean
  getByName(name: string): ToolEntry | undefined
  has(name: string): boolean
  /** Name-sorted; filters are ANDed. */
  getAll(filter?: ToolFilter): ToolEntry[]
  getByNamespace(filter?: ToolFilter): Map<string, ToolEntry[]>
  /** Name-sorted entries whose `applies` is absent or true. */
  selectActive(scope: ToolSelectScope): ToolEntry[]
  /**
   * The same active tools as a name-sorted ToolSet, built from the registry's own copies of the
   * entries: its cost does not depend on how the host built its entry objects.
   */
  selectActiveTools(scope: ToolSelectScope): ToolSet
  /** Ranked (BM25) or regex search over the whole catalog. */
  search(query: string, opts?: SearchOptions): SearchResult[]
  /**
   * `candidates`' names ranked for `query`, best first, non-matching ones left out: the
   * signature of ai@7's `toolSearch({ search })` callback
   * (`search: ({ query, tools }) => registry.rank(query, tools)`). Registered candidates rank
   * with this registry's search (hybrid when it has an embedder); unregistered ones by their
   * name and description, after the registered ones.
   */
  rank(query: string, candidates: ReadonlyArray<{ name: string; description?: string }>): Promise<string[]>
  /** Whether the host gave a usage store. */
  readonly learnsPins: boolean
  /** Records a call of a registered tool in the usage store (a no-op without one). */
  recordUse(name: string, who?: { userId?: string; assistantId?: string }): Promise<void>
  /** The tools pinned for this user and assistant now, best first, with why. Rejects with TOOLREG_USAGE_STORE_INVALID on a bad store. */
  pins(who?: { userId?: string; assistantId?: string; now?: number; encoding?: string }): Promise<Pin[]>
  /** The trust of every MCP tool synced so far (empty with `trust: false`). */
  trust(): ToolTrustStatus[]
  /**
   * Each synced server's `instructions` as tool trust admits them (pinned and held like a tool's
   * definition; `text` is null while held). Empty with `trust: false` or a host without `instructions()`.
   */
  serverInstructions(): ServerInstructionsStatus[]
  /** Approves what is held of `ref` (`serverId` or `serverId/toolName`; a server's approval covers its instructions); the next sync registers it. Resolves to the tool names approved (`(instructions)` for the instructions). */
  approveTool(ref: string): Promise<string[]>
  /** Forgets the pins of `ref`: a server's next listing is its first again; a tool's is new (held). */
  resetTrust(ref: string): Promise<string[]>
  readonly size: number
}

/** One scanner finding on a tool definition (crates/toolreg-trust). */
export interface ToolTrustFinding {
  /** `block`: held like a change until approved; `warn`: served, logged once. */
  level: 'block' | 'warn'
  /** `hidden-unicode`, `model-instruction`, `concealment`, `secret-request`, `file-request`, `parameter-smuggling`, `cross-server-reference`. */
  rule: string
  /** Where: `description`, `inputSchema/properties/sidenote/description`, … */
  field: string
  /** The words matched, invisible characters shown as `[U+XXXX]`. */
  excerpt: string
  explanation: string
}

export interface ToolTrustStatus {
  /** The registry name (wire id). */
  name: string
  serverId: string
  toolName: string
  /** `held` until approved; `kept-old`: served with its pinned definition; `removed` by the user; `gone` from the server's list. */
  state: 'pinned' | 'held' | 'kept-old' | 'removed' | 'gone'
  /** ISO time of the pin, and where it came from. */
  pinnedAt?: string
  source?: 'first-use' | 'approved'
  findings: ToolTrustFinding[]
  /** What changed since the pin, in one sentence. */
  change?: string
  /** How many hidden characters were removed from what the model sees. */
  hiddenCharactersRemoved?: number
}

/** A server's `instructions` under tool trust. */
export interface ServerInstructionsStatus {
  serverId: string
  /** `held` until approved (a change, or a blocking finding on first sight); `kept-old`: the pinned text is shown. */
  state: 'pinned' | 'held' | 'kept-old'
  /** What may reach a model (hidden Unicode stripped); null while held or when the server sent none. */
  text: string | null
  pinnedAt?: string
  source?: 'first-use' | 'approved'
  findings: ToolTrustFinding[]
  /** What changed since the pin, in one sentence. */
  change?: string
  hiddenCharactersRemoved?: number
}

/** A change `onToolChange` decides on. */
export interface ToolChange {
  serverId: string
  serverName: string
  /** The server's identity in the config (command line or URL) its pins are kept under. */
  identity: string
  /** null for the server's instructions. */
  toolName: string | null
  kind: 'added' | 'changed' | 'renamed' | 'instructions'
  /** A renamed tool's pinned name. */
  from?: string
  /** The readable diff, one sentence. */
  sentence: string
  /** The changed locations (JSON pointers) with their pinned and listed values. */
  fields: Array<{ pointer: string; before: unknown; after: unknown }>
  findings: ToolTrustFinding[]
  /** The pinned form before (absent for a new tool) and the listed one; the texts for instructions. */
  before?: object | string | null
  after: object | string | null
}

/** The module-level registry; tools register at import time. */
export declare const registry: ToolRegistry

export type Encoding = 'o200k_base' | 'cl100k_base'

/** Exact token count (equal to OpenAI's tiktoken). */
export declare function countTokens(text: string, opts?: { encoding?: Encoding }): number
/** Counts many strings in parallel, off the JS thread. */
export declare function countTokens(texts: string[], opts?: { encoding?: Encoding }): Promise<number[]>

export interface ModelCapability {
  functionCalling: boolean
  /** The host describes tools in the prompt for models without native function calling. */
  promptToolUse?: boolean
}

export interface ShouldDeferOptions {
  model?: ModelCapability
  encoding?: Encoding
  /** Default DEFER_THRESHOLD_PCT (10). */
  thresholdPct?: number
  /** Default FALLBACK_CONTEXT_WINDOW (32,000). */
  fallbackContextWindow?: number
  /** Default MIN_AUTO_DEFER_COUNT (5). */
  minAutoDeferCount?: number
  /** Default: measured for this request (meta-tool definitions + the deferred-tools section). */
  metaToolsOverheadTokens?: number
}

export type DeferReasonCode =
  | 'model_cannot_use_tools'
  | 'nothing_deferrable'
  | 'auto_pool_deferred'
  | 'always_only'
  | 'below_threshold'
  | 'too_few_auto_tools'
  | 'saving_below_overhead'
  /** `opts.conversation` kept the conversation's previous decision (the pool changed less than the margin). */
  | 'sticky'

export interface DeferDecision {
  deferredNames: Set<string>
  threshold: number
  autoTokens: number
  overheadTokens: number
  savedTokens: number
  /** `<code>: <sentence>` */
  reason: string
  reasonCode: DeferReasonCode
}

export declare function shouldDefer(
  entries: readonly ToolEntry[],
  contextWindow: number | undefined,
  opts?: ShouldDeferOptions,
): Promise<DeferDecision>

export interface ApplyDeferOptions extends ShouldDeferOptions {
  /** Names the meta-tools may reach besides the request's own tools. */
  extraAllowedNames?: Iterable<string>
  /**
   * Tool name → the name your client shows the model for it, when they differ (a gateway that
   * lists MCP tools under their own names): tool_inspect / tool_invoke take those names too and
   * use them in suggestions and approval messages. `server/tool` and an MCP tool's own name
   * (when one server has it) are always taken.
   */
  shownNames?: ReadonlyMap<string, string>
  /**
   * Names the model has inspected, kept by a host that builds the exposition again within one
   * conversation (a gateway whose servers change): they stay inspected, and new ones are added.
   */
  inspectedNames?: Set<string>
  /** Injects tool_exec over every allowed tool; pass its options (less `allowedNames`) to configure it. */
  exec?: boolean | Omit<ToolExecOptions, 'allowedNames'>
  /**
   * The AI SDK model's `provider` string (`model.provider`, e.g. `'google.generative-ai'`): the
   * exposed tools' input schemas and the meta-tools' schema outputs are rewritten to what that
   * provider accepts; inputs are still validated against the original schemas.
   */
  provider?: string
  /** OpenAI strict function tools for every exposed tool (tools marked `strict: true` always are). */
  strict?: boolean
  /**
   * How deferred tools reach the model. `'meta-tools'` (default): toolreg's tool_search /
   * tool_inspect / tool_invoke. `'native'`: the provider's own deferral, chosen from `provider`
   * (Anthropic `defer_loading` + `tool_reference`; OpenAI Responses `defer_loading` + a client
   * `tool_search`; other providers on ai@7: core `deferLoading` + `toolSearch`), falling back to
   * meta-tools with a warning. `'append'`: append-only loading (`anthropic.messages` with
   * `@ai-sdk/anthropic` >= 3.0.139 / 4.0.98, `openai.responses` with `@ai-sdk/openai` >= 4.0.96):
   * the request's `tools` holds only the eager tools and `tool_search`, found tools are added by
   * value where the search found them; pass the result's `prepareStep` (or `middleware`);
   * else `'native'` with a warning. `'auto'`: `'append'` where the SDK has it and `modelId` is
   * one the SDK documents it for (`claude-opus-4-8`, `gpt-5.4*`), else the `'native'` choice,
   * without warnings.
   */
  strategy?: 'meta-tools' | 'native' | 'append' | 'auto'
  /** The AI SDK model's `modelId` (`model.modelId`): `'auto'` appends only for models documented to support it. */
  modelId?: string
  /** Most tools one native search returns (default 5). */
  maxResults?: number
  /**
   * The conversation so far: what the model discovered (ai@7) or inspected (meta-tools) earlier
   * stays so on this request.
   */
  messages?: readonly import('ai').ModelMessage[]
  /**
   * A plain object kept per conversation (start with `{}`; JSON, so it can be stored with the
   * chat): the defer decision is kept while the auto pool changes by less than `stickyMargin`.
   * With `'append'` it also pins the definitions as first added and where withdrawn tools were
   * removed; it changes during the call, so store it after the call.
   */
  conversation?: ConversationState
  /** Share of the auto pool (names added plus removed) that may change before deciding afresh. Default STICKY_MARGIN (0.2). */
  stickyMargin?: number
  /** Who this request's tool calls are recorded for (with a usage store), and whose uses weigh most in the pins. */
  userId?: string
  assistantId?: string
  /** `false`: no pins; names: the host's own frozen set; else the pins learned from the usage store, frozen in `conversation`. */
  pins?: false | readonly string[]
}

/** A use the usage store keeps: never arguments or results. */
export interface ToolUse {
  tool: string
  namespace: string
  /** ms since the epoch */
  at: number
  user?: string
  assistant?: string
}

/** A pinned tool and why. */
export interface Pin {
  name: string
  namespace: string
  /** Uses decayed by the half-life, weighted by whose they were. */
  score: number
  uses: number
  /** ms since the epoch */
  lastUsed: number
  /** Whose uses weighed most. */
  scope: 'user+assistant' | 'user' | 'assistant' | 'everyone'
  /** Tokens of its definition, as the provider receives it. */
  tokens: number
  why: string
}

export interface ConversationState {
  toolreg?: {
    pool: string[]
    deferAuto: boolean
    contextWindow: number | null
    /** Pins learned from use, frozen on the conversation's first request. */
    pins?: string[]
    /** Append-only loading: each added tool's definition as first sent, and where each withdrawn tool was removed. */
    append?: { definitions: Record<string, unknown>; removals: Array<{ name: string; beforeAssistantTurn: number }> }
  }
  [key: string]: unknown
}

export type ExpositionStrategy =
  | 'inline'
  | 'meta-tools'
  | 'anthropic-append'
  | 'openai-append'
  | 'anthropic-native'
  | 'openai-native'
  | 'sdk-tool-search'

export interface DeferExposition<T extends ToolSet | undefined> {
  tools: T
  deferredEntries: ToolEntry[]
  /** The `<deferred-tools>` system-prompt section, when something is deferred. */
  systemPrompt?: string
  decision?: DeferDecision
  /** What was used: `'inline'` when nothing is deferred. */
  strategy: ExpositionStrategy
  /** Why a `'native'` or `'append'` request fell back, cacheControl removed from deferred tools, ... */
  warnings: string[]
  /** Tools loaded up front because they are pinned (learned from use, or the host's `pins`). */
  pinned?: string[]
  /**
   * Append-only strategies: pass to `generateText` / `streamText` / an Agent with `tools`. It
   * wraps the step's model with `middleware`, which takes the deferred tools out of the
   * request's `tools` (the SDK still validates, approves and runs them) and adds each found tool
   * to the prompt where `tool_search` found it.
   */
  prepareStep?: (options: { model: LanguageModel }) => { model: LanguageModel }
  /** The same, for hosts that wrap their model themselves (`wrapLanguageModel({ model, middleware })`). */
  middleware?: LanguageModelMiddleware
}

export declare function applyDeferExposition<T extends ToolSet | undefined>(
  tools: T,
  registry: ToolRegistry,
  contextWindow: number | undefined,
  opts?: ApplyDeferOptions,
): Promise<DeferExposition<T>>

export interface ProviderSchemaTarget {
  /** The AI SDK model's `provider` string. */
  provider?: string
  /** OpenAI strict mode. */
  strict?: boolean
}

/**
 * `schema` rewritten into what the model provider accepts: Gemini/Vertex (`google.*`) get no
 * `$ref`/`$defs`, no `anyOf` in `items`, `nullable` instead of `null` unions, ...; OpenAI with
 * `{ strict: true }` gets closed objects with every property required; Anthropic a typed root;
 * other providers the schema unchanged. What the provider cannot express is named in the
 * descriptions. Throws a TypeError (`TOOLREG_INVALID_ARGUMENT`) for a non-schema.
 */
export declare function providerSchema(
  schema: object | boolean,
  provider: string,
  opts?: { strict?: boolean },
): Record<string, unknown>

export declare function buildDeferredToolsSection(deferredEntries: readonly ToolEntry[]): string

export interface ToolSearchInput {
  query?: string
  namespace?: string
  limit?: number
  verbose?: boolean
  mode?: 'bm25' | 'regex'
}
export interface ToolSearchOutput {
  matchedNamespaces: Array<{
    namespace: string
    /** When browsing: how many deferred tools the namespace holds. */
    total?: number
    tools: Array<{ name: string; description: string; inputSchema?: unknown }>
  }>
}

export declare function createToolSearchTool(
  registry: ToolRegistry,
  deferredNames: Iterable<string>,
  inspectedNames?: Set<string>,
  /** This request's copies of entries (request-scoped tools); they win over the registered ones. */
  requestEntries?: ReadonlyMap<string, ToolEntry>,
  /** Verbose results carry the input schemas in the form this provider accepts. */
  opts?: ProviderSchemaTarget,
): Tool<ToolSearchInput, ToolSearchOutput>
export declare function createToolInspectTool(
  registry: ToolRegistry,
  allowedNames?: Iterable<string>,
  inspectedNames?: Set<string>,
  requestEntries?: ReadonlyMap<string, ToolEntry>,
  /** The exact-schema part is in the form this provider accepts. */
  opts?: ProviderSchemaTarget,
): Tool<{ name: string }, string>
export declare function createToolInvokeTool(
  registry: ToolRegistry,
  allowedNames?: Iterable<string>,
  inspectedNames?: Set<string>,
  requestEntries?: ReadonlyMap<string, ToolEntry>,
  /** The signature shown to an un-inspected call carries the schema in this provider's form. */
  opts?: ProviderSchemaTarget,
): Tool<{ name: string; params?: Record<string, unknown> }, unknown>

/** tool_exec limits, with the AI SDK code mode's names and defaults. */
export interface ToolExecLimits {
  /** Wall clock of a run (default 30,000); time idle waiting for an approval is not counted. */
  timeoutMs?: number
  /** Everything the run's sandbox process allocates, engine and buffers (default 64 MiB). */
  memoryLimitBytes?: number
  /** Engine stack (default 2 MiB, at most 8 MiB). */
  maxStackSizeBytes?: number
  /** Code size (default 256 KiB). */
  maxSourceBytes?: number
  /** Returned value as JSON (default 1 MiB). */
  maxResultBytes?: number
  /** All console output (default 64 KiB). */
  maxConsoleOutputBytes?: number
  /** One call's params as JSON (default 1 MiB). */
  maxToolInputBytes?: number
  /** One call's output as JSON (default 4 MiB). */
  maxToolOutputBytes?: number
  /** Tool calls per run (default 256). */
  maxBridgeRequests?: number
  /** Tool calls awaiting an answer at once (default 32). */
  maxInFlightBridgeRequests?: number
  /** Time a run may wait for a free sandbox process before it starts (default 10,000 ms). */
  queueTimeoutMs?: number
}
export interface ToolExecOptions {
  /** Tools the code may call (default: every registry entry). */
  allowedNames?: Iterable<string>
  limits?: ToolExecLimits
  /**
   * Asked before an approval-gated tool runs, with the params it would run with (defaults
   * applied); without it such calls are refused. `abortSignal` fires if the run ends meanwhile
   * (the answer is then ignored): close the dialog.
   */
  onApprovalRequest?: (request: { toolName: string; input: unknown; toolCallId: string; abortSignal: AbortSignal }) => boolean | Promise<boolean>
  /** Bound on one approval answer (default 300,000 ms). */
  approvalTimeoutMs?: number
  /** Sandbox processes runs execute in (default: one per core); pools are shared per size. */
  poolSize?: number
  /** Tokens (o200k_base) the tool signatures may take in the description (default 2,000). */
  signatureTokenBudget?: number
}
export interface ToolExecOutput {
  /** The returned value (JSON). */
  result?: unknown
  /** Console lines; non-`log` levels are prefixed (`[warn] …`). */
  logs?: string[]
  error?: string
  /** Stable code of `error`, e.g. `TOOLREG_EXEC_LIMIT`, `TOOLREG_EXEC_UNCAUGHT`. */
  errorCode?: string
  isError?: true
}
/** `tool_exec`: model-written JavaScript run in a QuickJS sandbox, calling tools through the same checks as tool_invoke. */
export declare function createToolExecTool(registry: ToolRegistry, opts?: ToolExecOptions): Tool<{ code: string }, ToolExecOutput>

export declare function schemaToJSDoc(name: string, description: string, schema: object): string

export type McpServerConfig =
  | { id: string; name?: string; type: 'stdio'; command: string; args?: string[]; env?: Record<string, string>; cwd?: string; protocolVersion?: McpProtocolVersion }
  | { id: string; name?: string; type: 'streamableHttp'; url: string; headers?: Record<string, string>; oauth?: McpOAuthClient; protocolVersion?: McpProtocolVersion }
  | { id: string; name?: string; type: 'sse'; url: string; headers?: Record<string, string>; oauth?: McpOAuthClient }

/**
 * An MCP revision to pin a server to. Without one the hub tries 2026-07-28 (`server/discover`,
 * no session) and falls back to the `initialize` handshake of an older server.
 */
export type McpProtocolVersion = '2026-07-28' | '2025-11-25' | '2025-06-18' | '2025-03-26' | '2024-11-05'

/** A client registered with the server's authorization server beforehand, and scopes to ask for. */
export interface McpOAuthClient {
  clientId?: string
  clientSecret?: string
  /** Replaces the scope choice (the challenge's `scope`, else the resource's `scopes_supported`). */
  scopes?: string[]
}

/** OAuth 2.1 for remote servers that ask for it; see docs/api.md#oauth. */
export interface McpAuthOptions {
  /**
   * Shows the authorization page; resolves to the URL the browser was redirected to (with
   * `code` and `state`) or to the bare code. Without it, stored tokens are used but a server
   * needing a new sign-in fails with `TOOLREG_MCP_AUTH_REQUIRED`.
   */
  onAuthorizationUrl?: (url: string, context: { serverId: string; redirectUri: string }) => string | Promise<string>
  /** Required with `onAuthorizationUrl`: where the browser is sent back to. */
  redirectUri?: string
  /** Keeps tokens between runs. Values are opaque JSON strings holding secrets; the key is the server id. */
  tokenStore?: {
    get(key: string): string | null | undefined | Promise<string | null | undefined>
    set(key: string, value: string): unknown
    delete(key: string): unknown
  }
  /** `client_name` for dynamic client registration (default 'toolreg'). */
  clientName?: string
  /** An HTTPS Client ID Metadata Document URL, used when the authorization server supports them. */
  clientMetadataUrl?: string
  /** How long one sign-in may take in the browser (default 300000); not counted against call timeouts. */
  timeoutMs?: number
}

/** What a stored token value holds, without its secrets. */
export interface McpStoredTokenInfo {
  resource: string
  clientId: string
  scopes: string[]
  hasRefreshToken: boolean
  /** Seconds since the epoch, or null when the server gave no lifetime. */
  expiresAt: number | null
}

/** A tool as the MCP server lists it (`tools/list`). */
export interface McpTool {
  name: string
  title?: string
  description?: string
  inputSchema: Record<string, unknown>
  outputSchema?: Record<string, unknown>
  annotations?: Record<string, unknown>
  [key: string]: unknown
}

/** The MCP `CallToolResult`. */
export interface McpCallToolResult {
  content: Array<Record<string, unknown> & { type: string }>
  structuredContent?: unknown
  isError: boolean
  [key: string]: unknown
}

export interface McpServerStatus {
  id: string
  name: string
  transport: 'stdio' | 'streamableHttp' | 'sse'
  state: 'idle' | 'connecting' | 'connected' | 'failed' | 'closed'
  /** Why the last connection failed or ended, in a sentence. */
  lastError?: string | null
  /** The transport's own error text behind `lastError`, when it says more (for logs). */
  lastErrorDetails?: string | null
  toolsCached?: number | null
  protocolVersion?: string | null
  pid?: number | null
  /** The last ~8 KiB the server wrote to stderr. */
  stderrTail: string
}

/**
 * What `syncMcpToolsToRegistry` needs from a host: an `McpHub`, or the host's own connections.
 * With `serversForToolIds` (an `McpHub` has it) only the owners of selected ids are listed;
 * without it the host owns its catalog: every server is listed and a tool's own `id` is its name.
 */
export interface McpToolHost {
  readonly servers: ReadonlyArray<{ id: string; name?: string }> | (() => ReadonlyArray<{ id: string; name?: string }>)
  listTools(serverId: string, opts?: { timeoutMs?: number }): Promise<McpCatalogTool[]>
  /** The server's `instructions` (null: none), reviewed by tool trust; without it instructions are not reviewed. */
  instructions?(serverId: string): string | null
  /** `onProgress` is passed when the sync was given one (`McpSyncOptions.onProgress`). */
  callTool(serverId: string, name: string, args: Record<string, unknown>, opts?: { timeoutMs?: number; signal?: AbortSignal; onProgress?: (progress: { progress: number; total?: number; message?: string }) => void }): Promise<McpCallToolResult>
  /** The ids of the servers that may own these tool ids, decided without listing. */
  serversForToolIds?(toolIds: Iterable<string>): string[]
  /** Becomes the registered tool's `metadata` (e.g. the host's identity record). */
  metadata?(tool: McpCatalogTool): unknown
}

/** A listed tool as a host adapter may describe it. */
export interface McpCatalogTool extends McpTool {
  /** The host's own wire id: the entry name, matched against `selectedToolIds` (catalog hosts only). */
  id?: string
  /** The server's display name for `namespaceLabel`. */
  serverName?: string
}

/** Real MCP client connections (Rust, rmcp): lazy connect, cached tool lists, cancellation, captured stderr. */
/** A server's `elicitation/create` params, with the asking server's id. */
export interface McpElicitationRequest {
  serverId: string
  message: string
  requestedSchema: { type: 'object'; properties: Record<string, object>; required?: string[] }
  [key: string]: unknown
}
export interface McpElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel'
  content?: Record<string, string | number | boolean | string[]>
}
/** A server's `sampling/createMessage` params, with the asking server's id. */
export interface McpSamplingRequest {
  serverId: string
  messages: Array<{ role: 'user' | 'assistant'; content: unknown }>
  maxTokens: number
  systemPrompt?: string
  [key: string]: unknown
}
/** The host's roots: `file://` URIs, each with an optional display name. */
export interface McpRootsAnswer {
  roots: { uri: string; name?: string }[]
}

export interface McpSamplingAnswer {
  role: 'assistant'
  content: { type: 'text'; text: string } | { type: string; [key: string]: unknown }
  model: string
  stopReason?: string
}
export declare class McpHub implements McpToolHost {
  /**
   * `connectTimeoutMs` bounds one connect attempt (default 30000). `reconnectBackoffMs`
   * (default 1000): after a failed connect, calls within this delay fail at once with that
   * error instead of starting the server again; it doubles per further failure (up to 32x)
   * and resets once a connect succeeds; 0 retries on every call.
   */
  constructor(options?: {
    servers?: McpServerConfig[]
    connectTimeoutMs?: number
    reconnectBackoffMs?: number
    /**
     * Asks the user when a server sends `elicitation/create` (form mode); fields the answer
     * leaves out take the requested schema's defaults. Without it the hub declares no
     * elicitation capability, so servers do not ask.
     */
    onElicitation?: (request: McpElicitationRequest) => McpElicitationAnswer | Promise<McpElicitationAnswer>
    /**
     * Answers a server's `sampling/createMessage` (its request to the host's model). Without it
     * the hub declares no sampling capability, so servers do not ask.
     */
    onSampling?: (request: McpSamplingRequest) => McpSamplingAnswer | Promise<McpSamplingAnswer>
    /**
     * The directories a server may work in, when it asks (`roots/list`, or a `roots/list` input
     * request at 2026-07-28). Without it the hub declares no roots capability, so servers do
     * not ask.
     */
    onRoots?: (request: { serverId: string }) => McpRootsAnswer | Promise<McpRootsAnswer>
    /** OAuth for remote servers: how to ask the user, where tokens are kept. */
    auth?: McpAuthOptions
    /** A server's tool list changed (its `listTools` lists it anew). */
    onToolsChanged?: (serverId: string) => void
    /** A server's log message (`notifications/message`). */
    onLog?: (message: { serverId: string; level: string; logger?: string; data: unknown }) => void
    /** A server's prompt or resource list changed (`notifications/prompts/list_changed`, `…/resources/list_changed`). */
    onListChanged?: (change: { serverId: string; list: 'prompts' | 'resources' }) => void
    /** A resource subscribed to through `toolreg serve` changed (`notifications/resources/updated`). */
    onResourceUpdated?: (update: { serverId: string; uri: string }) => void
  })
  /** A value of `auth.tokenStore` described without its secrets, or null when toolreg did not write it. */
  static describeStoredToken(value: string | null | undefined): McpStoredTokenInfo | null
  addServer(config: McpServerConfig): void
  removeServer(id: string): Promise<boolean>
  readonly servers: Array<{ id: string; name: string; transport: string }>
  /** `probe`: list a server held as failed too (see `hold`); a success lifts the hold. */
  listTools(serverId: string, opts?: { timeoutMs?: number; probe?: boolean }): Promise<McpTool[]>
  /**
   * Holds a server the host remembers as failed: every request to it fails at once with
   * `reason` instead of starting it or waiting on it, until `listTools(serverId, { probe: true })`
   * connects.
   */
  hold(serverId: string, reason: string): void
  /** The `instructions` the server sent at connect (null: none, or not connected); unreviewed third-party text. */
  instructions(serverId: string): string | null
  callTool(
    serverId: string,
    name: string,
    args?: Record<string, unknown>,
    opts?: { timeoutMs?: number; signal?: AbortSignal; onProgress?: (progress: { progress: number; total?: number; message?: string }) => void },
  ): Promise<McpCallToolResult>
  /** The server's prompts (all pages); `[]` when it offers none. MCP `Prompt` objects. */
  listPrompts(serverId: string, opts?: { timeoutMs?: number }): Promise<Array<{ name: string; title?: string; description?: string; arguments?: Array<{ name: string; description?: string; required?: boolean }> }>>
  /** `prompts/get`: the MCP `GetPromptResult`. */
  getPrompt(serverId: string, name: string, args?: Record<string, string>, opts?: { timeoutMs?: number }): Promise<{ description?: string; messages: Array<{ role: 'user' | 'assistant'; content: unknown }> }>
  /** The server's resources (all pages); `[]` when it offers none. MCP `Resource` objects. */
  listResources(serverId: string, opts?: { timeoutMs?: number }): Promise<Array<{ uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number }>>
  /** The server's resource templates (all pages). */
  listResourceTemplates(serverId: string, opts?: { timeoutMs?: number }): Promise<Array<{ uriTemplate: string; name: string; title?: string; description?: string; mimeType?: string }>>
  /** `resources/read`: the MCP `ReadResourceResult`. */
  readResource(serverId: string, uri: string, opts?: { timeoutMs?: number }): Promise<{ contents: Array<{ uri: string; mimeType?: string; text?: string; blob?: string }> }>
  /** Its changes reach the `onResourceUpdated` option. */
  subscribeResource(serverId: string, uri: string, opts?: { timeoutMs?: number }): Promise<void>
  unsubscribeResource(serverId: string, uri: string, opts?: { timeoutMs?: number }): Promise<void>
  /** `completion/complete` for one argument of a prompt or a resource template. */
  complete(
    serverId: string,
    ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string },
    argument: { name: string; value: string },
    opts?: { context?: { arguments?: Record<string, string> }; timeoutMs?: number },
  ): Promise<{ values: string[]; total?: number; hasMore?: boolean }>
  status(): McpServerStatus[]
  serversForToolIds(toolIds: Iterable<string>): string[]
  close(): Promise<void>
}

/**
 * `style: 'reference'` returns the reference registry's ids byte for byte (tiny-pinyin for Han,
 * camelCase, ≤ 63 chars, `_` + 20 hex of sha256(serverId + "\0" + toolName)).
 */
export declare function buildMcpToolWireId(
  ids: { serverId: string; serverName?: string; toolName: string },
  opts?: { style?: 'toolreg' | 'reference' },
): string

export interface McpSyncOptions {
  /**
   * The tool ids to sync. Empty: nothing is listed. Absent: nothing for an `McpHub`, every tool
   * for a host that owns its catalog.
   */
  selectedToolIds?: Iterable<string>
  /** The ids toolreg computes: its own (default) or the reference registry's, for persisted selections. */
  wireIdStyle?: 'toolreg' | 'reference'
  /** Per-server tools/list budget (default 15,000 ms). */
  timeoutMs?: number
  /** Per-call budget of the registered tools' execute (default 60,000 ms). */
  callTimeoutMs?: number
  /** Approval-gated tools get `needsApproval: true` and `defer: 'never'`. */
  needsApproval?: boolean | Set<string> | ((info: { serverId: string; serverName: string; toolName: string; wireId: string; annotations?: unknown }) => boolean)
  /**
   * Hears the servers' `notifications/progress` of each call of a synced tool, named by the
   * `toolCallId` its `execute` got (through `tool_invoke`: `<outer>::<name>`; through
   * `tool_exec`: `<outer>::exec::<n>`). Such tools' `tool_exec` calls take the JS path.
   */
  onProgress?: (update: McpToolProgress) => void
}

/** One progress notification of a synced MCP tool's call (`McpSyncOptions.onProgress`). */
export interface McpToolProgress {
  toolCallId: string | undefined
  /** The entry's name (the wire id). */
  name: string
  serverId: string
  toolName: string
  progress: number
  total?: number
  message?: string
}

export interface McpSyncResult {
  registered: string[]
  evicted: string[]
  listedServers: string[]
  failedServers: Array<{ serverId: string; error: string }>
}

export declare function syncMcpToolsToRegistry(registry: ToolRegistry, hub: McpToolHost, opts?: McpSyncOptions): Promise<McpSyncResult>

export declare function mcpResultToText(result: McpCallToolResult): string
export declare function mcpResultToModelOutput(result: McpCallToolResult): unknown

export declare class McpToolError extends ToolregError {
  readonly result: McpCallToolResult
}

export declare class ToolregError extends Error {
  readonly code: string
  /** MCP connection errors: the transport's own error text behind the message, for logs. */
  readonly details?: string
}
export declare class ToolInvocationError extends ToolregError {}

export declare const MIN_AUTO_DEFER_COUNT: number
export declare const META_TOOLS_OVERHEAD_TOKENS: number
export declare const DEFER_THRESHOLD_PCT: number
export declare const FALLBACK_CONTEXT_WINDOW: number
/** Default `stickyMargin` of `applyDeferExposition` (0.2). */
export declare const STICKY_MARGIN: number

// ---------------------------------------------------------------------------------------------
// Search: bulk registration and hybrid (words + embeddings) search. (Merged into the
// declarations above: interface + class of the same name.)

export interface ToolRegistryOptions {
  /**
   * Where uses are recorded and pins learned from: a JSON Lines file, or your own store. Nothing
   * is recorded without it.
   */
  usageStore?: string | { load(): readonly ToolUse[] | string | Promise<readonly ToolUse[] | string>; record(use: ToolUse): void | Promise<void> }
  /**
   * Tool trust of synced MCP tools (on by default, pins in memory): `store` (a pin file path or
   * `{ load, save }`), `onToolChange` (answer 'approve', 'keep-old' or 'remove'; nothing holds
   * the tool), `pinOnFirstUse` (true), `stripHidden` (true), `holdBlocked` (true). `false` turns it off.
   */
  trust?:
    | false
    | {
        store?: string | { load(): object | null | Promise<object | null>; save(data: object): void | Promise<void> }
        onToolChange?: (change: ToolChange) => 'approve' | 'keep-old' | 'remove' | undefined | Promise<'approve' | 'keep-old' | 'remove' | undefined>
        pinOnFirstUse?: boolean
        stripHidden?: boolean
        holdBlocked?: boolean
      }
  /** Pin scoring: half-life (default 14 days), token budget (2000), most pins (64), minimum score (1.5). */
  pins?: { halfLifeMs?: number; budgetTokens?: number; maxPins?: number; minScore?: number }
  /** An AI SDK embedding model; turns on hybrid search (vectors via `embedMany`). */
  embeddingModel?: import('ai').EmbeddingModel
  /** Or a plain embedder: one vector per text, in order. */
  embed?: (texts: string[]) => Promise<number[][]>
  /** Texts per embedder call when embedding registered tools (default 64; 512 built-in). */
  embedBatchSize?: number
  /**
   * Hybrid search with toolreg's built-in static embeddings (a token table distilled from
   * all-MiniLM-L6-v2): no model, no network; tools and queries are embedded natively on the
   * worker pool. Not combinable with `embed` / `embeddingModel`.
   */
  builtinEmbeddings?: boolean
  /**
   * Hybrid search with a local neural embedder run by toolreg's addon (a BERT encoder in Rust):
   * all-MiniLM-L6-v2 (English) from the optional package `@toolreg/model-minilm-l6-v2`
   * (`npm install @toolreg/model-minilm-l6-v2`, 45 MB), or with `model: 'multilingual-e5-small'`
   * the multilingual model from `@toolreg/model-multilingual-e5-small` (58 MB; requests and tools
   * in ~100 languages share one vector space); `true` takes MiniLM's package, else e5's if only it
   * is installed. Or `$TOOLREG_MODEL_DIR` or `path` (a folder with config.json, vocab.txt or
   * sentencepiece.safetensors, and model.safetensors). No host model, no network.
   * The model is read on the first embedding, on the worker pool; tool vectors are cached on
   * disk by text hash in `cacheDir` (default: the per-user cache folder, e.g. `~/.cache/toolreg`;
   * `false` for none). Throws `TOOLREG_LOCAL_MODEL_MISSING` when no model folder is found. Not
   * combinable with `embed` / `embeddingModel` / `builtinEmbeddings`.
   */
  localModel?: boolean | LocalModelOptions
  /**
   * A second stage for `searchAsync`, `rank` and the meta-tools (not the sync `search`): the
   * host's reranker (a Cohere, Jina or BGE reranker, a cross-encoder, ...) scores the first
   * stage's top `rerankTopK` candidates for the query, higher is better, one finite number per
   * candidate in order. A reranker that throws or answers otherwise is warned about and the
   * first-stage order stands.
   */
  rerank?: (query: string, candidates: Array<{ name: string; text: string }>) => Promise<number[]>
  /** How many first-stage hits the reranker scores per query (default 20, at most 1000). */
  rerankTopK?: number
  /**
   * The bilingual dictionary word search glosses Chinese requests with, so tools described only
   * in English are found: `true` (the default) uses the optional package `@toolreg/dict-zh-en`
   * when it is installed; a path names a `term<TAB>english words` file; `false`, none. Read on
   * the worker pool at the first request holding Chinese characters (the synchronous `search`
   * does not wait for it: it glosses from the next search on). A file that fails to load is
   * warned about once; search goes on without glosses.
   */
  dictionary?: boolean | string
}

export interface EmbeddingStats {
  enabled: boolean
  /** Tools with a vector. */
  ready: number
  /** Tools waiting for one. */
  pending: number
  /** Vector length (0 before the first vector). */
  dimensions: number
  /**
   * Requests ranked by words alone because the embedder is English (the built-in table, an
   * English local model) and the request is mostly in another script.
   */
  wordsOnlyRequests: number
  /**
   * With `localModel`: the model folder, whether its files have been read (on the first
   * embedding), and its counters.
   */
  localModel?: { path: string; loaded: boolean } & Partial<LocalModelStats> & Pick<LocalModelStats, 'computed' | 'cached' | 'cacheFile'>
}

/** The local models with an optional package. */
export type LocalModelName = 'all-MiniLM-L6-v2' | 'multilingual-e5-small'

export interface LocalModelOptions {
  /**
   * Which model's package: `'all-MiniLM-L6-v2'` (English; `@toolreg/model-minilm-l6-v2`) or
   * `'multilingual-e5-small'` (`@toolreg/model-multilingual-e5-small`). Default: `path`, else
   * `$TOOLREG_MODEL_DIR`, else an installed package chosen by `languages`. Not with `path`.
   */
  model?: LocalModelName
  /**
   * The users' languages (`['zh', 'en']`), to choose between the installed packages when `model`
   * is not given: all English → MiniLM, any other → multilingual-e5-small (each when it is the
   * only one installed). Default: the language of the process's locale.
   */
  languages?: string[]
  /** A model folder (config.json, vocab.txt or sentencepiece.safetensors, model.safetensors); default: `$TOOLREG_MODEL_DIR`, else an optional package. */
  path?: string
  /** Where tool vectors are cached; default the per-user cache folder; `false`: no disk cache. */
  cacheDir?: string | false
}

export interface LocalModelInfo {
  /** The package's model; null for a folder given by `path` or `$TOOLREG_MODEL_DIR`. */
  model: LocalModelName | null
  /** `'multilingual'` for an XLM-R (SentencePiece) model such as multilingual-e5-small, else `'en'`. */
  languages: 'en' | 'multilingual'
  /** `'bert'` (WordPiece vocab.txt) or `'xlm-roberta'` (sentencepiece.safetensors). */
  modelType: 'bert' | 'xlm-roberta'
  /** SHA-256 of the model's files and the encoder's arithmetic version (hex); the disk cache is per identity. */
  identity: string
  dimensions: number
  layers: number
  /** Tokens per text, [CLS] and [SEP] (`<s>`, `</s>`) included; longer texts are truncated (256 for MiniLM, 512 for e5). */
  maxTokens: number
  /** The word table's dtype; `'Q4_0/Q3'`: e5's 4-bit and 3-bit rows. */
  weightsDtype: 'F32' | 'F16' | 'BF16' | 'Q4_0/Q3'
  weightsBytes: number
  /** Put before requests (`embedQuery`; e5: `'query: '`) and before texts searched (`embed`; e5: `'passage: '`); empty for MiniLM. */
  queryPrefix: string
  passagePrefix: string
}

export interface LocalModelStats {
  /** Whether the encoder's weights are in memory: built on the first vector not in the cache. */
  encoderLoaded: boolean
  /** Vectors computed by the model. */
  computed: number
  /** Vectors served from the disk cache. */
  cached: number
  cacheFile: string | null
  /** Vectors read from the cache file when it was loaded. */
  cacheLoaded: number
  /** Vectors appended to it by this process. */
  cacheWritten: number
  /** Bytes of the cache file that were not whole, valid records (skipped). */
  cacheSkippedBytes: number
  /** Failed cache reads or writes (the first one is warned about; never fatal). */
  cacheErrors: number
  /** Stale cache files of other model versions deleted from the cache folder (unused for 30 days). */
  cachePruned: number
}

/** A loaded local model (see `ToolRegistryOptions.localModel`). */
export declare class LocalModel {
  readonly info: LocalModelInfo
  readonly stats: LocalModelStats
  /** Unit vectors of texts searched (tools; e5: `passage: `), computed on the worker pool; `{ cache: true }` goes through the disk cache. */
  embed(texts: string[], opts?: { cache?: boolean }): Promise<Float32Array[]>
  /**
   * What the hybrid search embeds for a query: the whole query's vector, then one per sentence
   * of a multi-sentence request (the whole query's then derived from the sentences', so each
   * token runs through the model once).
   */
  embedQuery(query: string): Promise<Float32Array[]>
  /** The disk cache's warnings since the last call. */
  takeWarnings(): string[]
}

/** Loads the local model (an optional package, `$TOOLREG_MODEL_DIR` or `path`) on the worker pool. */
export declare function loadLocalModel(options?: LocalModelOptions): Promise<LocalModel>

export interface ToolRegistry {
  /** `register` for many entries in one native call; all are checked before any is added. */
  registerMany(entries: Iterable<ToolEntry>): void
  /** `search`, fused with the embedding ranking when the registry has an embedder. */
  searchAsync(query: string, opts?: SearchOptions): Promise<SearchResult[]>
  /** Resolves when every tool has a vector, or when the last embedding attempt failed. */
  embeddingsReady(): Promise<void>
  readonly embeddingStats: EmbeddingStats
  /** Whether the registry has an embedder (its own or the built-in one). */
  readonly hybrid: boolean
}

// ---------------------------------------------------------------------------------------------
// Compatibility with the reference TypeScript registry (see README "Migrating from the
// reference registry").

/** Built-in namespaces, an MCP server's namespace, or any other string. */
export type ToolNamespace = 'web' | 'kb' | 'meta' | `mcp:${string}` | (string & {})

export declare const TOOL_SEARCH_TOOL_NAME: 'tool_search'
export declare const TOOL_INSPECT_TOOL_NAME: 'tool_inspect'
export declare const TOOL_INVOKE_TOOL_NAME: 'tool_invoke'
export declare const TOOL_EXEC_TOOL_NAME: 'tool_exec'

export interface ApprovalContext {
  input?: unknown
  toolCallId?: string
  messages?: import('ai').ModelMessage[]
  experimental_context?: unknown
}

/**
 * Whether this call of `tool` needs approval: `needsApproval` absent → false, a boolean →
 * itself, a function → its (awaited) answer for `ctx.input`. Fails closed: a function that
 * throws or rejects, or any other value, → true.
 */
export declare function isApprovalGated(tool: Tool, ctx?: ApprovalContext): Promise<boolean>

export interface ToolEntry {
  /**
   * Builds this request's tool from the scope (e.g. a description naming the assistant's
   * knowledge bases). `selectActive(scope)` returns a copy of the entry carrying it; a throw
   * makes the entry inactive for that request, with one warning. `tool` stays the registered
   * template that search and validation index.
   */
  buildTool?(scope: ToolApplyScope): Tool
}

// Tool-call repair (SPEC §7): the AI SDK's `experimental_repairToolCall` hook.

/** A tool call as the AI SDK's repair hook receives and returns it (`LanguageModelV3ToolCall`). */
export type RepairableToolCall = Parameters<import('ai').ToolCallRepairFunction<ToolSet>>[0]['toolCall']

export interface ToolCallRepair {
  /** The tool the repaired call runs. */
  toolName: string
  from: { toolName: string; input: string }
  to: { toolName: string; input: string }
  /** 'local': fixed without a model; 'model': by the structured-output call. */
  how: 'local' | 'model'
  /**
   * What was done, e.g. `name:prefix search -> mcp__docs__search`, `json:trailing-comma`,
   * `unwrap:envelope arguments`, `coerce:string-to-number at $.limit`, `model:attempt 1`.
   */
  steps: string[]
}

export interface RepairToolCallOptions {
  toolCall: RepairableToolCall
  /** The ToolSet of this call: names, schemas (`asSchema(tool.inputSchema)`) and `needsApproval`. */
  tools: ToolSet
  /** The SDK's `NoSuchToolError` or `InvalidToolInputError`; any other error is not repaired. */
  error?: unknown
  onRepair?: (repair: ToolCallRepair) => void
}

/**
 * The local repair pass alone (no model), with the hook's shape: the repaired call, validated
 * against the tool's schema, or `null`.
 */
export declare function repairToolCallLocally(options: RepairToolCallOptions): Promise<RepairableToolCall | null>

export interface AiRepairOptions {
  /** Model for the fallback: one `generateText` with `Output.object` per attempt. */
  model?: import('ai').LanguageModel
  /** Or the host's own structured-output call; returns the corrected arguments. */
  generate?: (request: { system: string; prompt: string; schema: unknown; toolName: string }) => Promise<unknown>
  /** Model calls per failed call (default 1); each answer must validate. */
  maxAttempts?: number
  onRepair?: (repair: ToolCallRepair) => void
}

/**
 * `experimental_repairToolCall` for `generateText`/`streamText`: the local pass first, then (with
 * `model` or `generate`) a model call whose output must validate, else `null`.
 */
export declare function createAiRepair(options?: AiRepairOptions): import('ai').ToolCallRepairFunction<ToolSet>
