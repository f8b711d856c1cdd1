#!/bin/sh
# Makes sure Debian's chromium is there for the report test (__tests__/report.test.mjs).
# Installs it with apt-get when absent; prints why and exits 1 when that cannot be done.
set -u
if command -v chromium >/dev/null 2>&1; then
  command -v chromium
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is not installed and cannot be installed here (needs root and apt-get)" >&2
  exit 1
fi
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >/tmp/toolreg-ensure-chromium.log 2>&1; then
  echo "apt-get install chromium failed; see /tmp/toolreg-ensure-chromium.log" >&2
  exit 1
fi
command -v chromium
