// JSON with comments (`//`, `/* */`) and trailing commas, as VS Code, Cursor and Windsurf read
// their MCP config files. A small recursive-descent parser rather than a regex over the text, so
// that `//` inside a string (every URL has one) stays text; its errors say line and column and
// the key they are in, which JSON.parse does not.

/** A syntax error at `line`:`column` (1-based), inside the value at `path` (`mcpServers.github`). */
export class JsoncError extends Error {
  constructor(message, { line, column, path }) {
    super(`line ${line}, column ${column}${path ? ` (in ${path})` : ''}: ${message}`)
    this.name = 'JsoncError'
    this.line = line
    this.column = column
    this.path = path
  }
}

/** A hostile file nested this deep would otherwise overflow the stack. */
const MAX_DEPTH = 1000
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const LITERALS = { true: true, false: false, null: null }

export function parseJsonc(text) {
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0

  const fail = (message, path, where = at) => {
    const before = text.slice(0, where)
    const line = before.split('\n').length
    throw new JsoncError(message, { line, column: where - before.lastIndexOf('\n'), path })
  }
  const found = () => (at >= text.length ? 'the end of the file' : `'${text[at]}'`)

  /** Skips white space and comments. */
  function skip(path) {
    for (;;) {
      while (at < text.length && ' \t\n\r'.includes(text[at])) at++
      if (text.startsWith('//', at)) {
        const end = text.indexOf('\n', at)
        at = end < 0 ? text.length : end
      } else if (text.startsWith('/*', at)) {
        const end = text.indexOf('*/', at + 2)
        if (end < 0) fail('a /* comment is never closed with */', path)
        at = end + 2
      } else {
        return
      }
    }
  }

  function string(path) {
    const start = at++
    while (at < text.length && text[at] !== '"') {
      if (text.charCodeAt(at) < 0x20) fail('a string runs past the end of its line (a " is missing)', path, start)
      at += text[at] === '\\' ? 2 : 1
    }
    if (at >= text.length) fail('a string is never closed (a " is missing)', path, start)
    at++
    try {
      return JSON.parse(text.slice(start, at))
    } catch {
      return fail('a string has an invalid escape (a \\ must be followed by one of "\\/bfnrtu)', path, start)
    }
  }

  /** Items of an object or array up to `close`, each read by `item`; a comma may trail the last. */
  function items(close, path, item) {
    at++
    skip(path)
    while (text[at] !== close) {
      item()
      skip(path)
      if (text[at] === ',') {
        at++
        skip(path)
      } else if (text[at] !== close) {
        fail(`expected ',' or '${close}', found ${found()}`, path)
      }
    }
    at++
  }

  function value(path, depth) {
    if (depth > MAX_DEPTH) fail(`nested more than ${MAX_DEPTH} levels deep`, path)
    skip(path)
    const c = text[at]
    if (c === '{') {
      const object = {}
      items('}', path, () => {
        if (text[at] !== '"') fail(`expected a key in double quotes, found ${found()}`, path)
        const key = string(path)
        const inner = path ? `${path}.${key}` : key
        skip(inner)
        if (text[at] !== ':') fail(`expected ':' after the key ${JSON.stringify(key)}, found ${found()}`, inner)
        at++
        // defineProperty: a "__proto__" key is data, as with JSON.parse, not the prototype.
        Object.defineProperty(object, key, { value: value(inner, depth + 1), enumerable: true, writable: true, configurable: true })
      })
      return object
    }
    if (c === '[') {
      const array = []
      items(']', path, () => array.push(value(`${path}[${array.length}]`, depth + 1)))
      return array
    }
    if (c === '"') return string(path)
    if (c === "'") fail('a string in single quotes; JSON needs double quotes', path)
    NUMBER.lastIndex = at
    const number = NUMBER.exec(text)?.[0]
    if (number) {
      at += number.length
      return Number(number)
    }
    const word = /^[A-Za-z_]\w*/.exec(text.slice(at, at + 32))?.[0]
    if (Object.hasOwn(LITERALS, word ?? '')) {
      at += word.length
      return LITERALS[word]
    }
    return fail(word ? `expected a value, found ${word} (a string needs double quotes)` : `expected a value, found ${found()}`, path)
  }

  const result = value('', 0)
  skip('')
  if (at < text.length) fail(`expected the end of the file after the top-level value, found ${found()}`, '')
  return result
}
