#!/usr/bin/env node
// Runs cargo for the host target explicitly. `napi build` passes `--target <host>`, which
// puts its artifacts under target/<triple>/; giving cargo the same flag lets `cargo test`
// reuse every dependency napi already compiled instead of building them all a second time.
import { execFileSync, spawnSync } from 'node:child_process'

const host = /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
const [subcommand, ...rest] = process.argv.slice(2)
const result = spawnSync('cargo', [subcommand, '--target', host, ...rest], { stdio: 'inherit' })
process.exit(result.status ?? 1)
