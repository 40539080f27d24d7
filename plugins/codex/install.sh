#!/bin/sh
# Install (or, with "uninstall", remove) the skillgrad-sleep skill for Codex in ~/.agents/skills/.
# Same as: skillgrad integrations codex install|uninstall
set -eu
action="${1:-install}"
if command -v skillgrad >/dev/null 2>&1; then
  exec skillgrad integrations codex "$action"
fi
exec python3 -m skillgrad.cli integrations codex "$action"
