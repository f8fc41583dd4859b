#!/usr/bin/env bash
# Installs everything the whole suite needs on a fresh machine, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  # The browser tests drive Debian's Chromium through playwright-core.
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi
fi
npm ci --no-audit --no-fund
# Lint and formatting first: every finding is an error (exceptions are written down in eslint.config.mjs or inline).
npm run lint
npm run format:check
npm run build
npm test
