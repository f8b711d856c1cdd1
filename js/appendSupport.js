'use strict'

const { invalidArgument } = require('./errors')
const { atLeast, checkTested } = require('./versions')

/**
 * Where append-only tool loading (append.js) can run: the provider families whose AI SDK package
 * adds tools by value mid-conversation, from the first release of each major that does
 * (`@ai-sdk/anthropic`: system-message `toolChanges` with a `tool`, the `inline-tools-2026-09-15`
 * beta; `@ai-sdk/openai`: `additionalTools` on a tool result; no 3.x release has it).
 */
const FAMILIES = {
  'anthropic.messages': { family: 'anthropic', package: '@ai-sdk/anthropic', since: { 3: '3.0.139', 4: '4.0.98' } },
  'openai.responses': { family: 'openai', package: '@ai-sdk/openai', since: { 4: '4.0.96' } },
}

/**
 * Models the providers document with mid-conversation tool loading; `auto` appends only for
 * these, so a host whose model may lack the feature keeps native deferral. An id matches its
 * entry exactly or with a date or `-latest` suffix (`claude-opus-4-8-20260601`); OpenAI's
 * entry also takes its variants (`gpt-5.4-mini`).
 * - Anthropic, "Mid-conversation system messages and tool changes" (platform.claude.com/docs/
 *   en/build-with-claude/mid-conversation-system-messages, English page as of 2026-09-26):
 *   "available on Claude Fable 5.1, Claude Mythos 5.1, Claude Fable 5, Claude Mythos 5, Claude
 *   Opus 5.5, Claude Opus 4.8, and Claude Opus 5", tool changes "in beta on the same models";
 *   Sonnet 5.5's "What's new" page adds "Define tools in a message (beta)". Haiku 5.5 is listed
 *   for system messages only in later translations, without tool changes: not included.
 * - OpenAI: the AI SDK's `additionalTools` docs (@ai-sdk/openai 4.0.126) show `gpt-5.4`; no
 *   OpenAI page lists models for `additional_tools`.
 */
const DOCUMENTED_MODELS = {
  anthropic: ['claude-opus-4-8', 'claude-opus-5', 'claude-opus-5-5', 'claude-sonnet-5-5', 'claude-fable-5', 'claude-fable-5-1', 'claude-mythos-5', 'claude-mythos-5-1'],
  openai: ['gpt-5.4'],
}

function isDocumented(family, modelId) {
  if (typeof modelId !== 'string') return false
  return DOCUMENTED_MODELS[family].some((id) => {
    if (modelId === id) return true
    if (!modelId.startsWith(`${id}-`)) return false
    const suffix = modelId.slice(id.length + 1)
    return /^(\d{8}|latest)$/.test(suffix) || (family === 'openai' && /^[a-z]/.test(suffix))
  })
}

/**
 * Whether this request can load found tools append-only: `{ strategy: 'anthropic-append' |
 * 'openai-append' }`, or `{ reason }` saying why not. With `documentedModelsOnly` (strategy
 * `auto`), `opts.modelId` must be a model the SDK docs show with the feature.
 */
function appendStrategyFor(opts, { documentedModelsOnly }) {
  if (opts.modelId !== undefined && typeof opts.modelId !== 'string') {
    throw invalidArgument('opts.modelId', 'expected the model\'s id string (model.modelId), e.g. "claude-opus-4-8"')
  }
  const target = FAMILIES[opts.provider]
  if (!target) return { reason: `provider ${JSON.stringify(opts.provider)} cannot add tools mid-conversation (anthropic.messages and openai.responses can)` }
  const version = checkTested(target.package)
  if (version === undefined) return { reason: `${target.package} is not installed` }
  const since = target.since[version.split('.')[0]]
  if (since === undefined || !atLeast(version, since)) {
    const needed = Object.values(target.since).map((v) => `>= ${v}`).join(' or ')
    return { reason: `${target.package} ${version} cannot add tools mid-conversation by value (needs ${needed})` }
  }
  if (documentedModelsOnly && !isDocumented(target.family, opts.modelId)) {
    return { reason: `model ${JSON.stringify(opts.modelId)} is not one the SDK documents mid-conversation tool loading for` }
  }
  return { strategy: `${target.family}-append` }
}

module.exports = { appendStrategyFor, isDocumented, DOCUMENTED_MODELS }
