'use strict'

/**
 * toolreg: one tool registry for the Vercel AI SDK, with a Rust core.
 * This file owns the public API; `binding.js` is the generated loader of the native addon.
 */

// First: a missing addon fails here with an error that says what to do.
require('./js/native')
const { ToolRegistry } = require('./js/registry')
const { countTokens } = require('./js/tokens')
const {
  shouldDefer,
  applyDeferExposition,
  buildDeferredToolsSection,
  DEFER_THRESHOLD_PCT,
  FALLBACK_CONTEXT_WINDOW,
  MIN_AUTO_DEFER_COUNT,
  META_TOOLS_OVERHEAD_TOKENS,
  DEFERRED_OVERHEAD_BUDGET_TOKENS,
  STICKY_MARGIN,
} = require('./js/defer')
const { MetaToolName, isApprovalGated } = require('./js/meta/shared')
const { createToolSearchTool } = require('./js/meta/search')
const { createToolInspectTool } = require('./js/meta/inspect')
const { createToolInvokeTool } = require('./js/meta/invoke')
const { createToolExecTool } = require('./js/meta/exec')
const { schemaToJSDoc } = require('./js/jsdoc')
const { ToolregError, ToolInvocationError } = require('./js/errors')
const { McpHub } = require('./js/mcp/hub')
const { buildMcpToolWireId } = require('./js/mcp/wireId')
const { syncMcpToolsToRegistry, McpToolError } = require('./js/mcp/sync')
const { mcpResultToText, mcpResultToModelOutput } = require('./js/mcp/content')
const { providerSchema } = require('./js/provider')
const { repairToolCallLocally, createAiRepair } = require('./js/repair')
const { loadLocalModel, LocalModel } = require('./js/localModel')

const ToolDefer = Object.freeze({ Never: 'never', Always: 'always', Auto: 'auto' })

// The reference registry's names for the meta-tools' wire names (same values as MetaToolName).
const TOOL_SEARCH_TOOL_NAME = MetaToolName.Search
const TOOL_INSPECT_TOOL_NAME = MetaToolName.Inspect
const TOOL_INVOKE_TOOL_NAME = MetaToolName.Invoke
const TOOL_EXEC_TOOL_NAME = MetaToolName.Exec

/** The process-wide registry: tools register at import time. Tests should use `new ToolRegistry()`. */
const registry = new ToolRegistry()

module.exports = {
  ToolRegistry,
  registry,
  ToolDefer,
  MetaToolName,
  countTokens,
  shouldDefer,
  applyDeferExposition,
  buildDeferredToolsSection,
  createToolSearchTool,
  createToolInspectTool,
  createToolInvokeTool,
  createToolExecTool,
  schemaToJSDoc,
  McpHub,
  buildMcpToolWireId,
  syncMcpToolsToRegistry,
  mcpResultToText,
  mcpResultToModelOutput,
  repairToolCallLocally,
  createAiRepair,
  loadLocalModel,
  LocalModel,
  ToolregError,
  ToolInvocationError,
  McpToolError,
  MIN_AUTO_DEFER_COUNT,
  META_TOOLS_OVERHEAD_TOKENS,
  DEFERRED_OVERHEAD_BUDGET_TOKENS,
  DEFER_THRESHOLD_PCT,
  FALLBACK_CONTEXT_WINDOW,
  STICKY_MARGIN,
  TOOL_SEARCH_TOOL_NAME,
  TOOL_INSPECT_TOOL_NAME,
  TOOL_INVOKE_TOOL_NAME,
  TOOL_EXEC_TOOL_NAME,
  isApprovalGated,
  providerSchema,
}
