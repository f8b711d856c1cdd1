'use strict'

/**
 * MCP `CallToolResult` → what the model gets. Text stays text, images and audio become media
 * parts (never base64 inside text), embedded resources their text or a file part, and
 * `structuredContent` is kept when no text carries it.
 */

function resourceText(resource) {
  if (typeof resource?.text === 'string') return resource.text
  return `[Resource: ${resource?.uri ?? 'unknown'}${resource?.mimeType ? ` (${resource.mimeType})` : ''}]`
}

/** One string for places that only take text (errors, logs, `tool_exec`). */
function mcpResultToText(result) {
  if (result === null || typeof result !== 'object' || !Array.isArray(result.content)) {
    return JSON.stringify(result ?? null)
  }
  const parts = []
  for (const block of result.content) {
    switch (block?.type) {
      case 'text':
        parts.push(block.text)
        break
      case 'image':
      case 'audio':
        parts.push(`[${block.type === 'image' ? 'Image' : 'Audio'}: ${block.mimeType} — the model cannot see this content]`)
        break
      case 'resource':
        parts.push(resourceText(block.resource))
        break
      case 'resource_link':
        parts.push(`[Resource: ${block.uri}${block.name ? ` ${block.name}` : ''}]`)
        break
      default:
        parts.push(JSON.stringify(block))
    }
  }
  const hasText = result.content.some((b) => b?.type === 'text')
  if (result.structuredContent !== undefined && !hasText) parts.push(JSON.stringify(result.structuredContent))
  return parts.join('\n')
}

/** The AI SDK `ToolResultOutput` for an MCP result, keeping the order of its blocks. */
function mcpResultToModelOutput(result) {
  if (result === null || typeof result !== 'object' || !Array.isArray(result.content)) {
    return { type: 'json', value: result ?? null }
  }
  const value = []
  for (const block of result.content) {
    switch (block?.type) {
      case 'text':
        value.push({ type: 'text', text: block.text })
        break
      case 'image':
        value.push({ type: 'image-data', data: block.data, mediaType: block.mimeType })
        break
      case 'audio':
        value.push({ type: 'file-data', data: block.data, mediaType: block.mimeType })
        break
      case 'resource':
        if (typeof block.resource?.blob === 'string') {
          value.push({ type: 'file-data', data: block.resource.blob, mediaType: block.resource.mimeType ?? 'application/octet-stream' })
        } else {
          value.push({ type: 'text', text: resourceText(block.resource) })
        }
        break
      case 'resource_link':
        value.push({ type: 'text', text: `[Resource: ${block.uri}${block.name ? ` ${block.name}` : ''}]` })
        break
      default:
        value.push({ type: 'text', text: JSON.stringify(block) })
    }
  }
  const hasText = result.content.some((b) => b?.type === 'text')
  if (result.structuredContent !== undefined && !hasText) {
    value.push({ type: 'text', text: JSON.stringify(result.structuredContent) })
  }
  if (value.length === 0) return { type: 'text', value: '' }
  if (value.every((part) => part.type === 'text')) {
    return { type: 'text', value: value.map((part) => part.text).join('\n') }
  }
  return { type: 'content', value }
}

module.exports = { mcpResultToText, mcpResultToModelOutput }
