#!/usr/bin/env bash
# Installs code-server (VS Code served to a browser) for the e2e suite and
# `npm start`, into .cache/code-server/ of this repository: never into the
# project's own node_modules. Recipe and reasons: ../shared/testing.md.
#
# Idempotent: a stamp file records a finished install, so a second run only
# checks the Debian packages and the binary.
#
# Works as root with no tty (CI); as another user it uses sudo for apt-get.
set -euo pipefail

CODE_SERVER_VERSION=4.100.3
APT_PACKAGES=(libkrb5-dev pkg-config ripgrep chromium git python3 make g++ bubblewrap keyutils util-linux fortunes-zh)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install_dir="$repo_root/.cache/code-server"
stamp="$install_dir/.installed-$CODE_SERVER_VERSION"
code_server_bin="$install_dir/node_modules/.bin/code-server"
started_at=$(date +%s)

log() { printf '[install-code-server] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_apt_packages() {
  local missing=()
  local pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg -s "$pkg" >/dev/null 2>&1; then missing+=("$pkg"); fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return
  fi
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
}

verify() {
  local version
  # --config and XDG_DATA_HOME keep it from writing into the user's home.
  version="$(XDG_DATA_HOME="$install_dir/.data" "$code_server_bin" \
    --config "$install_dir/config.yaml" --version 2>/dev/null |
    grep -m 1 -E '^[0-9]+\.[0-9]+\.[0-9]+' || true)"
  case "$version" in
    "$CODE_SERVER_VERSION"*) ;;
    *)
      log "code-server did not report version $CODE_SERVER_VERSION (got: '${version}')" >&2
      return 1
      ;;
  esac
  log "code-server $version at $code_server_bin"
}

install_code_server() {
  log "installing code-server@$CODE_SERVER_VERSION into $install_dir"
  rm -rf "$install_dir"
  mkdir -p "$install_dir"
  cd "$install_dir"
  # A package.json of its own, so npm does not walk up to the project's.
  printf '{ "name": "candor-code-server", "private": true }\n' >package.json

  # Its post-install refuses root and would download ripgrep: do it by hand.
  npm install --no-audit --no-fund --ignore-scripts "code-server@$CODE_SERVER_VERSION"
  npm_config_build_from_source=true npm rebuild argon2

  cd node_modules/code-server/lib/vscode
  npm install --no-audit --no-fund --omit=dev --ignore-scripts
  mkdir -p node_modules/@vscode/ripgrep/bin
  cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  npm_config_yes=true npm rebuild # kerberos, node-pty, spdlog, watcher...
  ln -sfn node_modules node_modules.asar
  (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
  (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
  (cd extensions && npm install --no-audit --no-fund --omit=dev)
  cd "$install_dir"
}

install_apt_packages

if [ -f "$stamp" ] && [ -x "$code_server_bin" ]; then
  log "already installed (stamp $stamp)"
  verify
else
  install_code_server
  verify
  date -u +%Y-%m-%dT%H:%M:%SZ >"$stamp"
fi
log "done in $(($(date +%s) - started_at)) s"
