#!/usr/bin/env bash
# e2e suite: the packaged VSIX in a real VS Code (code-server) driven by
# Chromium. Extra arguments go to mocha (e.g. --grep smoke).
# Screenshots and, for failed tests, logs land in test-artifacts/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-code-server.sh
npm run package
exec npx mocha --config .mocharc.e2e.json "$@"
