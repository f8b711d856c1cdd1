// A TypeScript host written the way the README shows, compiled with `tsc --noEmit --strict`
// against the package's own `index.d.ts` and `ai`'s types (see __tests__/types.test.mjs).
// Lines marked @ts-expect-error are misuses that must keep failing to compile.
import { tool, jsonSchema, generateText, stepCountIs, type ToolSet, type LanguageModel, type ModelMessage } from 'ai'
import { z } from 'zod'
import {
  ToolRegistry,
  registry,
  applyDeferExposition,
  shouldDefer,
  countTokens,
  McpHub,
  loadLocalModel,
  type LocalModel,
  type ToolRegistryOptions,
  syncMcpToolsToRegistry,
  buildMcpToolWireId,
  isApprovalGated,
  MetaToolName,
  TOOL_SEARCH_TOOL_NAME,
  type ToolEntry,
  type ToolApplyScope,
  type DeferDecision,
  type McpServerConfig,
  type ConversationState,
  type ExpositionStrategy,
} from 'toolreg'

declare function search(query: string, limit: number): Promise<string[]>
declare const model: LanguageModel
declare const assistant: { settings?: { enableWebSearch?: boolean } }

// A Zod tool, registered on the module-level registry.
registry.register({
  name: 'web_search',
  namespace: 'web',
  description: 'Search the web',
  defer: 'auto',
  tool: tool({
    description: 'Search the web for current information',
    inputSchema: z.object({ query: z.string(), limit: z.number().int().default(10) }),
    execute: async ({ query, limit }) => search(query, limit),
  }),
  applies: (scope) => Boolean((scope.assistant as typeof assistant | undefined)?.settings?.enableWebSearch),
})

// The local neural embedder: the optional package's model, or a folder of one.
const withLocalModel = new ToolRegistry({ localModel: { path: '/models/all-MiniLM-L6-v2', cacheDir: false } })
const localStats: number | undefined = withLocalModel.embeddingStats.localModel?.computed
async function embedLocally(): Promise<number> {
  const model: LocalModel = await loadLocalModel({ cacheDir: '/tmp/vectors' })
  const vectors: Float32Array[] = await model.embed(['read a file'], { cache: true })
  const cacheFile: string | null = model.stats.cacheFile
  return vectors[0].length + model.info.dimensions + (cacheFile ? 1 : 0) + (localStats ?? 0)
}
void embedLocally
// @ts-expect-error cacheDir is a folder or false
const badLocal: ToolRegistryOptions = { localModel: { cacheDir: true } }
void badLocal
// The multilingual model's package by name; its info says what it is.
const multilingual = new ToolRegistry({ localModel: { model: 'multilingual-e5-small' } })
void multilingual
async function multilingualInfo(): Promise<string> {
  const model = await loadLocalModel({ model: 'multilingual-e5-small', cacheDir: false })
  const languages: 'en' | 'multilingual' = model.info.languages
  const name: 'all-MiniLM-L6-v2' | 'multilingual-e5-small' | null = model.info.model
  return `${languages} ${name} ${model.info.queryPrefix}${model.info.passagePrefix}`
}
void multilingualInfo
// The users' languages choose between the installed packages; requests the English embedders
// cannot read are counted.
const byLanguage = new ToolRegistry({ localModel: { languages: ['zh', 'en'] } })
const wordsOnly: number = byLanguage.embeddingStats.wordsOnlyRequests
void wordsOnly
// @ts-expect-error languages is a list of codes
const badLanguages: ToolRegistryOptions = { localModel: { languages: 'zh' } }
void badLanguages
// @ts-expect-error only the models with a package have a name
const unknownModel: ToolRegistryOptions = { localModel: { model: 'bge-small' } }
void unknownModel

// A jsonSchema() tool on a registry of its own, with a request-scoped builder.
const local = new ToolRegistry({ logger: { warn: (message) => console.warn(message) }, builtinEmbeddings: true })
const kbEntry: ToolEntry = {
  name: 'kb_lookup',
  namespace: 'kb',
  namespaceLabel: 'Knowledge base',
  description: 'Look something up in the knowledge base',
  defer: 'always',
  tool: tool({
    description: 'Look up a document',
    inputSchema: jsonSchema<{ id: string }>({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }),
    execute: async ({ id }) => ({ id, text: 'document text' }),
  }),
  buildTool: (scope: ToolApplyScope) => tool({ description: `Look up a document (${scope.mcpToolIds.size} MCP tools)`, inputSchema: z.object({ id: z.string() }) }),
}
local.register(kbEntry)
local.registerMany([kbEntry])

export async function perRequest(mcpToolIds: Set<string>): Promise<string> {
  const scope: ToolApplyScope = { assistant, mcpToolIds }
  const active: ToolEntry[] = registry.selectActive(scope)
  const tools: ToolSet = Object.fromEntries(active.map((e) => [e.name, e.tool]))
  const alsoTools: ToolSet = registry.selectActiveTools(scope)
  const { tools: exposed, systemPrompt, decision } = await applyDeferExposition({ ...tools, ...alsoTools }, registry, 128_000, {
    model: { functionCalling: true },
  })
  const reason: string | undefined = decision?.reason
  const searchTool = exposed[MetaToolName.Search] ?? exposed[TOOL_SEARCH_TOOL_NAME]
  void searchTool
  const result = await generateText({
    model,
    tools: exposed,
    system: ['You are helpful.', systemPrompt].filter(Boolean).join('\n\n'),
    prompt: 'find me a tool',
    stopWhen: stepCountIs(10),
  })
  return `${reason ?? ''} ${result.text}`
}

export async function nativeDeferral(messages: ModelMessage[], conversation: ConversationState): Promise<string[]> {
  // Hosts often keep the selected ids in an array: any iterable is accepted.
  const tools: ToolSet = registry.selectActiveTools({ mcpToolIds: [] })
  const exposed = await applyDeferExposition(tools, registry, 200_000, {
    strategy: 'native',
    provider: 'anthropic.messages',
    messages,
    conversation,
    stickyMargin: 0.25,
    maxResults: 3,
  })
  const strategy: ExpositionStrategy = exposed.strategy
  const ranked: string[] = await registry.rank('weather', [{ name: 'get_weather' }, { name: 'x', description: 'other' }])
  // @ts-expect-error strategy is 'meta-tools' | 'native' | 'append' | 'auto'
  void applyDeferExposition(tools, registry, 1, { strategy: 'anthropic' })
  return [strategy, ...exposed.warnings, ...ranked]
}

export async function appendOnly(model: LanguageModel, messages: ModelMessage[], conversation: ConversationState): Promise<string> {
  const tools: ToolSet = registry.selectActiveTools({ mcpToolIds: [] })
  const exposed = await applyDeferExposition(tools, registry, 200_000, {
    strategy: 'auto',
    provider: 'anthropic.messages',
    modelId: 'claude-opus-4-8',
    messages,
    conversation,
  })
  const result = await generateText({ model, tools: exposed.tools, prepareStep: exposed.prepareStep, messages })
  const removed = conversation.toolreg?.append?.removals.map((r) => r.name) ?? []
  return [exposed.strategy, exposed.middleware ? 'middleware' : '', result.text, ...removed].join(' ')
}

export async function tokensAndDecisions(): Promise<number> {
  const one: number = countTokens('hello world')
  const many: number[] = await countTokens(['a', 'b'], { encoding: 'cl100k_base' })
  const decision: DeferDecision = await shouldDefer(registry.getAll(), 32_000, { minAutoDeferCount: 1 })
  const gated: boolean = await isApprovalGated(kbEntry.tool, { input: { id: 'x' } })
  const hits = local.search('knowledge', { limit: 3, namespace: 'kb' })
  const hybrid = await local.searchAsync('knowledge')
  return one + many.length + decision.savedTokens + Number(gated) + hits.length + hybrid.length
}

export async function mcp(): Promise<void> {
  const servers: McpServerConfig[] = [
    { id: 'fs', name: 'Files', type: 'stdio', command: 'npx', args: ['@modelcontextprotocol/server-filesystem', '/tmp'] },
    { id: 'remote', type: 'streamableHttp', url: 'http://127.0.0.1:3000/mcp', oauth: { clientId: 'my-app' } },
  ]
  const tokens = new Map<string, string>()
  const hub = new McpHub({
    servers,
    connectTimeoutMs: 10_000,
    auth: {
      redirectUri: 'http://127.0.0.1:33418/callback',
      onAuthorizationUrl: async (url, { serverId }) => `${url}#${serverId}`,
      tokenStore: { get: (k) => tokens.get(k), set: (k, v) => tokens.set(k, v), delete: (k) => tokens.delete(k) },
    },
  })
  const scopes: string[] | undefined = McpHub.describeStoredToken(tokens.get('remote'))?.scopes
  console.log(scopes)
  const id = buildMcpToolWireId({ serverId: 'fs', serverName: 'Files', toolName: 'read_file' })
  const synced = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: new Set([id]) })
  const failed: string[] = synced.failedServers.map((f) => `${f.serverId}: ${f.error}`)
  const result = await hub.callTool('fs', 'read_file', { path: '/tmp/x' }, { timeoutMs: 5_000, signal: AbortSignal.timeout(1_000) })
  console.log(failed, result.isError, hub.status()[0]?.state)
  await hub.close()
}

export function misuses(): void {
  // @ts-expect-error `defer` is 'never' | 'always' | 'auto'
  registry.register({ name: 'x', namespace: 'web', description: 'x', defer: 'sometimes', tool: kbEntry.tool })
  // @ts-expect-error an entry needs a namespace
  registry.register({ name: 'x', description: 'x', defer: 'auto', tool: kbEntry.tool })
  // @ts-expect-error countTokens counts strings
  countTokens(42)
  // @ts-expect-error the encoding is one of the two tiktoken encodings
  countTokens('x', { encoding: 'p50k_base' })
  // @ts-expect-error a stdio server needs a command
  new McpHub({ servers: [{ id: 'a', type: 'stdio' }] })
  // @ts-expect-error onAuthorizationUrl resolves to the callback URL or code, a string
  new McpHub({ auth: { redirectUri: 'x', onAuthorizationUrl: async () => 42 } })
  // @ts-expect-error selectActive needs a scope with mcpToolIds
  registry.selectActive({})
  // @ts-expect-error applyDeferExposition's window is a number
  void applyDeferExposition({}, registry, '128k')
}
