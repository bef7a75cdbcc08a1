#!/usr/bin/env bash
# `npm start`: everything from a fresh clone to Candor running in a real
# VS Code (code-server) on 127.0.0.1, on a small demo workspace. Runs in the
# foreground until Ctrl+C. PORT=NNNN picks the port (default 8642, or a free
# one if that is busy). Never 8080 by default: that is llama.cpp's own default
# port, and Candor probes it (and 11434, 1234, 8000) for local model servers.
#
# Quiet on purpose: each step says one line, and what the tools print
# (npm, the code-server install, vsce's file list, code-server's own log)
# goes to .cache/start/start.log and .cache/start/code-server.log. A step
# that fails prints the end of its log.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

state="$repo_root/.cache/start"
mkdir -p "$state"
step_log="$state/start.log"
server_log="$state/code-server.log"
: >"$step_log"

log() { printf '[start] %s\n' "$*"; }

# Runs a step with its output in the step log; on failure, shows the end of it.
quietly() {
  local what="$1"
  shift
  printf '\n=== %s: %s\n' "$what" "$*" >>"$step_log"
  if ! "$@" >>"$step_log" 2>&1; then
    log "$what failed; the end of $step_log:"
    tail -n 40 "$step_log" >&2
    exit 1
  fi
}

# 1. The project's own dependencies, when missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing dependencies (npm ci)"
  quietly "npm ci" npm ci --no-audit --no-fund --loglevel=error
fi

# 2. code-server and the Debian packages it needs (a no-op when done before).
if [ ! -d .cache/code-server ]; then
  log "installing code-server into .cache/code-server (the first time only; a few minutes)"
fi
quietly "code-server install" bash scripts/install-code-server.sh

# 3. Build and package Candor exactly as a user gets it.
version="$(node -p 'require("./package.json").version')"
vsix="$repo_root/candor-$version.vsix"
quietly "packaging" npm run --silent package
log "packaged candor-$version.vsix"

# 4. The demo workspace: made once, then kept (what you do in it survives).
workspace="$repo_root/.cache/demo-workspace"
if [ ! -d "$workspace/.git" ]; then
  log "creating the demo workspace in .cache/demo-workspace"
  rm -rf "$workspace"
  mkdir -p "$workspace"
  cp -R demo/. "$workspace/"
  git -C "$workspace" init -q -b main
  git -C "$workspace" add -A
  git -C "$workspace" -c user.name="Candor demo" -c user.email="demo@candor.invalid" \
    -c commit.gpgsign=false commit -q -m "Demo project"
fi

# 5. A VS Code profile of its own, with the VSIX installed.
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
quietly "installing the extension" "${code_server[@]}" --install-extension "$vsix" --force

# 6. A port: $PORT, else 8642; if it is taken, any free one. None of the
# ports Candor probes for local model servers (candor.localServers' default,
# read from package.json): a model server started there with its defaults
# would clash with code-server, and Candor would probe its own workbench.
probe_ports="$(node -p 'require("./package.json").contributes.configuration.properties["candor.localServers"].default.map((e) => parseInt(String(e), 10)).join(" ")')"
is_probe_port() { [[ " $probe_ports " == *" $1 "* ]]; }
port_is_free() {
  node -e '
    const s = require("net").createServer();
    s.once("error", () => process.exit(1));
    s.listen(Number(process.argv[1]), "127.0.0.1", () => s.close(() => process.exit(0)));
  ' "$1"
}
port="${PORT:-8642}"
if is_probe_port "$port"; then
  log "warning: port $port is one Candor probes for local model servers ($probe_ports); a model server there would clash with code-server"
fi
if ! port_is_free "$port"; then
  taken="$port"
  port="$(node -e '
    const probes = process.argv[1].split(" ").map(Number);
    const pick = () => {
      const s = require("net").createServer();
      s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => (probes.includes(p) ? pick() : console.log(p))); });
    };
    pick();
  ' "$probe_ports")"
  log "port $taken is busy; using $port"
fi

# 7. The server, its log in a file. --disable-workspace-trust: the demo folder
# is ours. Started in the background, where a script's jobs ignore the
# terminal's Ctrl+C: the trap below ends it, and its helpers end with it
# instead of each crashing on the signal.
: >"$server_log"
"${code_server[@]}" --auth none --bind-addr "127.0.0.1:$port" \
  --disable-telemetry --disable-update-check --disable-workspace-trust \
  "$workspace" >>"$server_log" 2>&1 &
server=$!
stop() {
  trap - INT TERM
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  printf '\n'
  log "stopped"
  exit 0
}
trap stop INT TERM

# The address is printed once the server answers.
if ! node -e '
  const [url, pid] = [process.argv[1], Number(process.argv[2])];
  const deadline = Date.now() + 60000;
  const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
  const poll = () => require("http").get(url, (res) => { res.resume(); res.statusCode === 200 ? process.exit(0) : retry(); }).on("error", retry);
  const retry = () => (Date.now() > deadline || !alive() ? process.exit(1) : setTimeout(poll, 200));
  poll();
' "http://127.0.0.1:$port/healthz" "$server"; then
  log "code-server did not start; the end of $server_log:"
  tail -n 40 "$server_log" >&2
  kill -TERM "$server" 2>/dev/null || true
  exit 1
fi

url="http://127.0.0.1:$port/?folder=$workspace"
if is_probe_port "$port"; then
  port_note="Port $port is one Candor probes for local model servers ($probe_ports):
  a model server cannot listen there while code-server does."
else
  port_note="Port $port is none of those Candor looks for local model servers on
  ($probe_ports): start llama.cpp, Ollama, LM Studio or vLLM with their
  defaults and Select Model (the chat's Model button) finds them."
fi
cat <<BANNER

  Candor is running in VS Code (code-server) on port $port. Open:

    $url

  $port_note

BANNER
log "Ctrl+C stops it. The server's log: .cache/start/code-server.log"
wait "$server"
