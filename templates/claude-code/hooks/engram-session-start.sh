#!/usr/bin/env bash
# SessionStart hook: the harness (not the agent) starts an engram session, records its id
# for the agent's engram calls, and prints the memory context block into the session.
set -euo pipefail
assigned="${ENGRAM_ASSIGNED:-project:$(basename "$PWD")}"
id=$(env -u ENGRAM_SESSION engram session start --agent claude-code --assigned "$assigned" --json | sed -n 's/.*"id": "\(s-[0-9a-z]*\)".*/\1/p' | head -1)
mkdir -p .claude
printf '%s\n' "$id" > .claude/engram-session
ENGRAM_SESSION="$id" engram context --budget 2000 || true
