import type { Tool, ToolSet } from 'ai'

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
  /** AI SDK Tool, passed through untouched. */
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
  selectActive(scope: ToolApplyScope): ToolEntry[]
  /** Ranked (BM25) or regex search over the whole catalog. */
  search(query: string, opts?: SearchOptions): SearchResult[]
  readonly size: number
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
  /** Injects tool_exec (not available in this release: throws TOOLREG_NOT_AVAILABLE). */
  exec?: boolean
}

export interface DeferExposition<T extends ToolSet | undefined> {
  tools: T
  deferredEntries: ToolEntry[]
  /** The `<deferred-tools>` system-prompt section, when something is deferred. */
  systemPrompt?: string
  decision?: DeferDecision
}

export declare function applyDeferExposition<T extends ToolSet | undefined>(
  tools: T,
  registry: ToolRegistry,
  contextWindow: number | undefined,
  opts?: ApplyDeferOptions,
): Promise<DeferExposition<T>>

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
): Tool<ToolSearchInput, ToolSearchOutput>
export declare function createToolInspectTool(
  registry: ToolRegistry,
  allowedNames?: Iterable<string>,
  inspectedNames?: Set<string>,
): Tool<{ name: string }, string>
export declare function createToolInvokeTool(
  registry: ToolRegistry,
  allowedNames?: Iterable<string>,
  inspectedNames?: Set<string>,
): Tool<{ name: string; params?: Record<string, unknown> }, unknown>

export declare function schemaToJSDoc(name: string, description: string, schema: object): string

export type McpServerConfig =
  | { id: string; name?: string; type: 'stdio'; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { id: string; name?: string; type: 'streamableHttp'; url: string; headers?: Record<string, string> }
  | { id: string; name?: string; type: 'sse'; url: string; headers?: Record<string, string> }

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
  lastError?: string | null
  toolsCached?: number | null
  protocolVersion?: string | null
  pid?: number | null
  /** The last ~8 KiB the server wrote to stderr. */
  stderrTail: string
}

/** What `syncMcpToolsToRegistry` needs from a host: an `McpHub`, or the host's own connections. */
export interface McpToolHost {
  readonly servers: ReadonlyArray<{ id: string; name?: string }> | (() => ReadonlyArray<{ id: string; name?: string }>)
  listTools(serverId: string, opts?: { timeoutMs?: number }): Promise<McpTool[]>
  callTool(serverId: string, name: string, args: Record<string, unknown>, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<McpCallToolResult>
}

/** Real MCP client connections (Rust, rmcp): lazy connect, cached tool lists, cancellation, captured stderr. */
export declare class McpHub implements McpToolHost {
  /**
   * `connectTimeoutMs` bounds one connect attempt (default 30000). `reconnectBackoffMs`
   * (default 1000): after a failed connect, calls within this delay fail at once with that
   * error instead of starting the server again; it doubles per further failure (up to 32x)
   * and resets once a connect succeeds; 0 retries on every call.
   */
  constructor(options?: { servers?: McpServerConfig[]; connectTimeoutMs?: number; reconnectBackoffMs?: number })
  addServer(config: McpServerConfig): void
  removeServer(id: string): Promise<boolean>
  readonly servers: Array<{ id: string; name: string; transport: string }>
  listTools(serverId: string, opts?: { timeoutMs?: number }): Promise<McpTool[]>
  callTool(serverId: string, name: string, args?: Record<string, unknown>, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<McpCallToolResult>
  status(): McpServerStatus[]
  serversForToolIds(toolIds: Iterable<string>): string[]
  close(): Promise<void>
}

export declare function buildMcpToolWireId(ids: { serverId: string; serverName?: string; toolName: string }): string

export interface McpSyncOptions {
  selectedToolIds: Iterable<string>
  /** Per-server tools/list budget (default 15,000 ms). */
  timeoutMs?: number
  /** Per-call budget of the registered tools' execute (default 60,000 ms). */
  callTimeoutMs?: number
  /** Approval-gated tools get `needsApproval: true` and `defer: 'never'`. */
  needsApproval?: boolean | Set<string> | ((info: { serverId: string; serverName: string; toolName: string; wireId: string; annotations?: unknown }) => boolean)
}

export interface McpSyncResult {
  registered: string[]
  evicted: string[]
  listedServers: string[]
  failedServers: Array<{ serverId: string; error: string }>
}

export declare function syncMcpToolsToRegistry(registry: ToolRegistry, hub: McpToolHost, opts: McpSyncOptions): Promise<McpSyncResult>

export declare function mcpResultToText(result: McpCallToolResult): string
export declare function mcpResultToModelOutput(result: McpCallToolResult): unknown

export declare class McpToolError extends ToolregError {
  readonly result: McpCallToolResult
}

export declare class ToolregError extends Error {
  readonly code: string
}
export declare class ToolInvocationError extends ToolregError {}

export declare const MIN_AUTO_DEFER_COUNT: number
export declare const META_TOOLS_OVERHEAD_TOKENS: number
export declare const DEFER_THRESHOLD_PCT: number
export declare const FALLBACK_CONTEXT_WINDOW: number

// ---------------------------------------------------------------------------------------------
// Search: bulk registration and hybrid (words + embeddings) search. (Merged into the
// declarations above: interface + class of the same name.)

export interface ToolRegistryOptions {
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
}

export interface EmbeddingStats {
  enabled: boolean
  /** Tools with a vector. */
  ready: number
  /** Tools waiting for one. */
  pending: number
  /** Vector length (0 before the first vector). */
  dimensions: number
}

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
