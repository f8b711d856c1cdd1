'use strict'

const { invalidArgument } = require('./errors')

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
 * Model ids (prefixes) the providers' SDK docs show with mid-conversation tool loading. `auto`
 * appends only for these, so a host whose model may lack the feature keeps native deferral.
 */
const DOCUMENTED_MODELS = { anthropic: ['claude-opus-4-8'], openai: ['gpt-5.4'] }

const installed = new Map()

/** The installed version of a provider package toolreg resolves, or undefined. */
function installedVersion(pkg) {
  if (!installed.has(pkg)) {
    let version
    try {
      version = require(`${pkg}/package.json`).version
    } catch {
      version = undefined
    }
    installed.set(pkg, version)
  }
  return installed.get(pkg)
}

/** `a >= b` for `major.minor.patch` versions (a pre-release counts as its release). */
function atLeast(a, b) {
  const [x, y] = [a, b].map((v) => v.split(/[.-]/).slice(0, 3).map(Number))
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i]
  return true
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
  const version = installedVersion(target.package)
  if (version === undefined) return { reason: `${target.package} is not installed` }
  const since = target.since[version.split('.')[0]]
  if (since === undefined || !atLeast(version, since)) {
    const needed = Object.values(target.since).map((v) => `>= ${v}`).join(' or ')
    return { reason: `${target.package} ${version} cannot add tools mid-conversation by value (needs ${needed})` }
  }
  if (documentedModelsOnly && !DOCUMENTED_MODELS[target.family].some((prefix) => opts.modelId?.startsWith(prefix))) {
    return { reason: `model ${JSON.stringify(opts.modelId)} is not one the SDK documents mid-conversation tool loading for` }
  }
  return { strategy: `${target.family}-append` }
}

module.exports = { appendStrategyFor, DOCUMENTED_MODELS }
