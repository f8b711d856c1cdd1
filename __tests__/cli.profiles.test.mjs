// toolreg's settings in an MCP config file ("toolreg": { needsApproval, profiles }): what they
// select, and the errors a mistyped setting gets (file, key and what was expected).
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../cli/config.mjs'
import { applyProfile, mergeToolregSettings, needsApprovalBySettings } from '../cli/profiles.mjs'

const servers = { github: { command: 'gh-mcp' }, fs: { command: 'fs-mcp' }, notes: { command: 'notes-mcp' } }
const load = (toolreg) => parseConfig({ mcpServers: servers, toolreg }, 'mcp.json', { env: {} })

describe('toolreg settings in a config file', () => {
  it('a profile keeps its servers and the tools its patterns allow, minus the ! ones', () => {
    const { servers: all, settings } = load({ profiles: { review: { servers: ['github', 'fs'], tools: ['github/get_*', 'fs/*', '!fs/write_*'] } } })
    const { servers: chosen, keeps } = applyProfile(all, settings, 'review')
    expect(chosen.map((s) => s.config.id)).toEqual(['github', 'fs'])
    expect(keeps('github', 'get_issue')).toBe(true)
    expect(keeps('github', 'create_issue')).toBe(false)
    expect(keeps('fs', 'read_file')).toBe(true)
    expect(keeps('fs', 'write_file')).toBe(false)
  })

  it('a profile without servers takes the servers its tool patterns name; without a profile, everything', () => {
    const { servers: all, settings } = load({ profiles: { notes: { tools: ['notes/*'] }, all: {} } })
    expect(applyProfile(all, settings, 'notes').servers.map((s) => s.config.id)).toEqual(['notes'])
    expect(applyProfile(all, settings, 'all').servers).toHaveLength(3)
    const none = applyProfile(all, settings, undefined)
    expect(none.servers).toHaveLength(3)
    expect(none.keeps('github', 'anything')).toBe(true)
  })

  it('needsApproval patterns match server/tool with wildcards; settings of several files add up', () => {
    const a = load({ needsApproval: ['github/merge_*'], profiles: { p: { servers: ['fs'] } } }).settings
    const b = load({ needsApproval: ['*/delete_*'], profiles: { p: { servers: ['notes'] } } }).settings
    const merged = mergeToolregSettings([a, b])
    expect(needsApprovalBySettings(merged, 'github', 'merge_pull_request')).toBe(true)
    expect(needsApprovalBySettings(merged, 'notes', 'delete_note')).toBe(true)
    expect(needsApprovalBySettings(merged, 'github', 'get_issue')).toBe(false)
    // A regex character in a pattern is a plain character.
    expect(needsApprovalBySettings(load({ needsApproval: ['fs/a.b'] }).settings, 'fs', 'axb')).toBe(false)
    expect(merged.profiles.p.servers).toEqual(['fs'])
  })

  it('names the file, the key and what was expected for each mistake', () => {
    expect(() => load('yes')).toThrow(/^mcp\.json: toolreg: expected an object/)
    expect(() => load({ needsAproval: [] })).toThrow(/^mcp\.json: toolreg\.needsAproval: is not a toolreg setting \(known: needsApproval, profiles\)/)
    expect(() => load({ needsApproval: 'github/*' })).toThrow(/toolreg\.needsApproval: expected an array of non-empty strings/)
    expect(() => load({ needsApproval: ['merge_pull_request'] })).toThrow(/toolreg\.needsApproval\[0\]: expected "server\/tool"/)
    expect(() => load({ profiles: { p: { server: ['fs'] } } })).toThrow(/toolreg\.profiles\.p\.server: is not a profile setting \(known: servers, tools\)/)
    expect(() => load({ profiles: { p: { tools: ['fs/*', '!fs/'] } } })).toThrow(/toolreg\.profiles\.p\.tools\[1\]: expected "server\/tool"/)
    const { servers: all, settings } = load({ profiles: { p: { servers: ['gihtub'] } } })
    expect(() => applyProfile(all, settings, 'p')).toThrow(/toolreg\.profiles\.p: names the server "gihtub", which the config does not have \(it has github, fs, notes\)/)
    expect(() => applyProfile(all, settings, 'q')).toThrow(/no profile named "q"; the config has "p"/)
  })
})
