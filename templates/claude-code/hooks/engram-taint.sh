#!/usr/bin/env bash
# PostToolUse hook for web fetches and outside (MCP) tools: the session has now read
# third-party text, so everything it writes is marked tainted. Taint never goes down.
set -uo pipefail
id=$(cat .claude/engram-session 2>/dev/null) || exit 0
tool=$(sed -n 's/.*"tool_name": *"\([^"]*\)".*/\1/p' | head -1)
engram session taint "$id" --reason "PostToolUse: ${tool:-outside tool}" >/dev/null 2>&1 || true
