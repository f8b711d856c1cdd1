'use strict'

// The names a model may use for a tool in tool_inspect / tool_invoke. Models copy names from
// wherever they saw them: the tool list of their client (`read_text_file`), the CLI or docs
// (`filesystem/read_text_file`), or tool_search (the wire id). Every form that means one tool
// is taken; anything else is refused with the closest names, so the next call can succeed.

const { ToolInvocationError } = require('../errors')

/** Levenshtein distance, for "did you mean". */
function editDistance(a, b) {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = row
  }
  return previous[b.length]
}

/** Up to three of `candidates` within a few edits of `wanted` (case ignored), closest first. */
function closest(wanted, candidates, label = (c) => c) {
  const limit = Math.max(2, Math.floor(wanted.length / 3))
  const lower = wanted.toLowerCase()
  return candidates
    .map((c) => ({ c, d: Math.abs(label(c).length - wanted.length) > limit ? limit + 1 : editDistance(lower, label(c).toLowerCase()) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || label(a.c).localeCompare(label(b.c)))
    .slice(0, 3)
    .map((x) => x.c)
}

/** ` Did you mean "a", "b"?`, or nothing. */
const didYouMean = (options) => (options.length ? ` Did you mean ${options.map((o) => JSON.stringify(o)).join(', ')}?` : '')

/** `server/tool` for an MCP entry (the name the CLI and docs use), else its own name. */
const labelOf = (entry) => (entry?.mcp ? `${entry.mcp.serverId}/${entry.mcp.toolName}` : entry?.name)

/**
 * Other names → the allowed names they mean (several when a short name is shared): `server/tool`
 * by server id and by display name, the MCP tool's own name, and the names the client shows
 * (`shownNames`: name → shown). Built on the first name that is not an allowed one.
 */
function aliasesOf(lookup, shownNames) {
  const aliases = new Map()
  const add = (alias, name) => {
    if (alias === undefined || alias === name) return
    const names = aliases.get(alias) ?? new Set()
    names.add(name)
    aliases.set(alias, names)
  }
  for (const name of lookup) {
    const entry = lookup.get(name)
    add(shownNames?.get(name), name)
    if (!entry?.mcp) continue
    add(`${entry.mcp.serverId}/${entry.mcp.toolName}`, name)
    add(`${entry.mcp.serverName}/${entry.mcp.toolName}`, name)
    add(entry.mcp.toolName, name)
  }
  return aliases
}

const aliasesByLookup = new WeakMap()

/**
 * The allowed name `name` means, or a ToolInvocationError the model can act on:
 * TOOLREG_AMBIGUOUS_TOOL (a short name several servers share: the full names follow),
 * TOOLREG_NOT_ALLOWED (a registered tool this request does not carry), TOOLREG_UNKNOWN_TOOL.
 * `shownNames` (allowed name → the name the client lists it under) adds those names, and
 * suggestions use them.
 */
function resolveToolName(lookup, name, { shownNames } = {}) {
  if (typeof name !== 'string' || name === '') throw new ToolInvocationError('Give the tool\'s name as a non-empty string.', 'TOOLREG_UNKNOWN_TOOL')
  if (lookup.allows(name)) return name
  let aliases = aliasesByLookup.get(lookup)
  if (!aliases) aliasesByLookup.set(lookup, (aliases = aliasesOf(lookup, shownNames)))
  const meant = aliases.get(name)
  if (meant?.size === 1) return meant.values().next().value
  if (meant) {
    const options = [...meant].map((n) => labelOf(lookup.get(n)) ?? n).sort()
    throw new ToolInvocationError(`"${name}" is the name of ${options.length} tools here; use one of ${options.map((o) => JSON.stringify(o)).join(', ')}.`, 'TOOLREG_AMBIGUOUS_TOOL')
  }
  // Suggested in the form that came close to what was asked; a wire id as the client shows it.
  const suggestions = closest(name, [...new Set([...aliases.keys(), ...lookup])]).map((candidate) => shownNames?.get(candidate) ?? candidate)
  const hint = `${didYouMean([...new Set(suggestions)])} tool_search finds tools by what they do.`
  if (lookup.get(name)) throw new ToolInvocationError(`Tool not available in this request: ${name}.${hint}`, 'TOOLREG_NOT_ALLOWED')
  throw new ToolInvocationError(`No tool named "${name}" here.${hint}`, 'TOOLREG_UNKNOWN_TOOL')
}

module.exports = { resolveToolName, editDistance, closest, didYouMean, labelOf }
