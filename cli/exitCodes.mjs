// Exit codes of `toolreg`, documented in `toolreg --help` and the README.
export const EXIT = Object.freeze({
  OK: 0,
  INTERNAL: 1,
  USAGE: 2,
  CONFIG: 3,
  SERVER_FAILED: 4,
  TOOL_NOT_FOUND: 5,
  INVALID_PARAMS: 6,
  TOOL_FAILED: 7,
  NOT_APPROVED: 8,
  AUTH: 9,
  HELD: 10,
  INTERRUPTED: 130,
  TERMINATED: 143,
})

export const EXIT_HELP = `Exit codes:
  0    success
  1    unexpected error
  2    bad command line (unknown option, missing argument, bad number)
  3    bad config file (the message names the file and the key); audit/report with every server skipped or none listed; call/inspect of a skipped server
  4    a server failed to start or timed out: audit/report/tools/prompts/resources finished without it; call/inspect found no tool because a server it may be on did not start; tools/prompts/resources/prompt/read of a server that did not start
  5    no such tool (every server started), server or prompt, an ambiguous name, or a listed-only catalog tool (call)
  6    call/prompt: the params are not valid JSON, a key=value is not what the schema takes, or they do not match the tool's schema and the local repair could not fix them (or fixed them in a way that needs --yes)
  7    call: the tool ran and failed (isError, or the server errored, or --call-timeout ran out); prompt/read: the server refused or timed out; exec: the code failed
  8    call: approval needed and not given (declined, or no terminal and no --yes)
  9    auth login: the sign-in did not complete; auth status/logout: no such remote server
  10   trust diff: a tool differs from its pin, is new, or is flagged (held until trust approve)
  130  interrupted (Ctrl-C); every server process is stopped first
  143  terminated (SIGTERM); likewise`

/** An error that ends the CLI with a chosen exit code and a plain message. */
export class CliError extends Error {
  constructor(message, exitCode) {
    super(message)
    this.name = 'CliError'
    this.exitCode = exitCode
  }
}
