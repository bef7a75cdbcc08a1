#!/usr/bin/env bash
# `npm start`: everything from a fresh clone to Candor running in a real
# VS Code (code-server) on 127.0.0.1, on a small demo workspace. Runs in the
# foreground until Ctrl+C. PORT=NNNN picks the port (default 8080, or a free
# one if that is busy).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

log() { printf '[start] %s\n' "$*"; }

# 1. The project's own dependencies, when missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing dependencies (npm ci)"
  npm ci --no-audit --no-fund
fi

# 2. code-server and the Debian packages it needs (a no-op when done before).
bash scripts/install-code-server.sh

# 3. Build and package Candor exactly as a user gets it.
npm run package
version="$(node -p 'require("./package.json").version')"
vsix="$repo_root/candor-$version.vsix"

# 4. The demo workspace: made once, then kept (what you do in it survives).
workspace="$repo_root/.cache/demo-workspace"
if [ ! -d "$workspace/.git" ]; then
  log "creating the demo workspace in $workspace"
  rm -rf "$workspace"
  mkdir -p "$workspace"
  cp -R demo/. "$workspace/"
  git -C "$workspace" init -q -b main
  git -C "$workspace" add -A
  git -C "$workspace" -c user.name="Candor demo" -c user.email="demo@candor.invalid" \
    -c commit.gpgsign=false commit -q -m "Demo project"
fi

# 5. A VS Code profile of its own, with the VSIX installed.
state="$repo_root/.cache/start"
user_dir="$state/user-data"
ext_dir="$state/extensions"
config="$state/config.yaml"
mkdir -p "$user_dir/User" "$ext_dir"
printf 'auth: none\ncert: false\n' >"$config"
if [ ! -f "$user_dir/User/settings.json" ]; then
  cat >"$user_dir/User/settings.json" <<'JSON'
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false
}
JSON
fi
code_server=(node "$repo_root/.cache/code-server/node_modules/code-server/out/node/entry.js"
  --config "$config" --user-data-dir "$user_dir" --extensions-dir "$ext_dir")
"${code_server[@]}" --install-extension "$vsix" --force

# 6. A port: $PORT, else 8080; if it is taken, any free one.
port_is_free() {
  node -e '
    const s = require("net").createServer();
    s.once("error", () => process.exit(1));
    s.listen(Number(process.argv[1]), "127.0.0.1", () => s.close(() => process.exit(0)));
  ' "$1"
}
port="${PORT:-8080}"
if ! port_is_free "$port"; then
  taken="$port"
  port="$(node -e '
    const s = require("net").createServer();
    s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => console.log(p)); });
  ')"
  log "port $taken is busy; using $port"
fi

url="http://127.0.0.1:$port/?folder=$workspace"
cat <<BANNER

  ==============================================================
   Candor is starting in VS Code (code-server). Open:

     $url

   Ctrl+C stops it.
  ==============================================================

BANNER

# 7. The foreground server. --disable-workspace-trust: the demo folder is ours.
exec "${code_server[@]}" --auth none --bind-addr "127.0.0.1:$port" \
  --disable-telemetry --disable-update-check --disable-workspace-trust \
  "$workspace"
