// Files named on the command line (exec --file, report --out): a failure to read or write one
// is a sentence naming the file and what is wrong, never a Node stack.
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { CliError, EXIT } from './exitCodes.mjs'

const PROBLEMS = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of its path is not a directory',
  ENAMETOOLONG: 'the name is too long',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
}

/** `Cannot read /x: no such file.`, or null when `error` is not a file-system error. */
export function describeFileError(error, action = error?.syscall === 'open' ? 'open' : 'use') {
  if (typeof error?.path !== 'string') return null
  if (error.code === 'ENOENT') {
    return action === 'write' ? `Cannot write ${error.path}: the directory ${dirname(error.path)} does not exist.` : `Cannot ${action} ${error.path}: there is no such file.`
  }
  const problem = PROBLEMS[error.code]
  return problem ? `Cannot ${action} ${error.path}: ${problem}.` : null
}

function fileStep(action, step) {
  try {
    return step()
  } catch (error) {
    const sentence = describeFileError(error, action)
    throw sentence ? new CliError(sentence, EXIT.USAGE) : error
  }
}

export const readUserFile = (path) => fileStep('read', () => readFileSync(path, 'utf8'))
export const writeUserFile = (path, data) => fileStep('write', () => writeFileSync(path, data))

/**
 * Fails now, with the sentence the write would fail with, when `path`'s folder is missing or
 * not writable: `report --out` checks before it starts every server, not after.
 */
export const checkWritable = (path) =>
  fileStep('write', () => {
    try {
      accessSync(dirname(path), constants.W_OK)
    } catch (error) {
      throw Object.assign(error, { path })
    }
  })
