// Context windows of common models, for `--model NAME` (a prefix of the model id is enough).
// Figures are the providers' published input windows; `--context-window` overrides them.
export const MODEL_WINDOWS = [
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-5', 400_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
  ['claude-opus-4', 200_000],
  ['claude-sonnet-4', 200_000],
  ['claude-haiku-4', 200_000],
  ['claude-3-5', 200_000],
  ['gemini-2.5', 1_048_576],
  ['deepseek', 128_000],
]

/** The window of the longest known prefix of `name`, or undefined. */
export function modelWindow(name) {
  const id = name.toLowerCase().replace(/^[a-z-]+\//, '')
  let best
  for (const [prefix, window] of MODEL_WINDOWS) {
    if (id.startsWith(prefix) && (!best || prefix.length > best[0].length)) best = [prefix, window]
  }
  return best?.[1]
}
