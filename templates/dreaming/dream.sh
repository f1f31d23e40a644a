#!/bin/sh
# engram's scheduled dream (README "Dreaming"): reads the scope's recent sessions, proposes
# (never writes) and commits the proposals on a dream/<yyyy-mm-dd> branch of the store,
# which the owner merges to review them; with DREAM_PUSH set, pushes that branch there so
# the owner reviews it like a pull request.
#
#   ENGRAM_BASE             the store folder (required)
#   DREAM_SCOPE             the scope to dream, e.g. tenant:acme (required)
#   DREAM_TRANSCRIPTS       a Claude Code transcript folder, e.g. ~/.claude/projects/<project> (optional)
#   DREAM_SINCE             the period (default 7d)
#   DREAM_KEY               the dreamer key's name (default nightly)
#   ENGRAM_PASSPHRASE_FILE  a 0600 file holding that key's passphrase
#   DREAM_PUSH              a git remote to push the branch to (optional)
#   ENGRAM                  the engram command (default: engram)
set -eu
: "${ENGRAM_BASE:?set ENGRAM_BASE to the store folder}"
: "${DREAM_SCOPE:?set DREAM_SCOPE to the scope to dream, e.g. tenant:acme}"
export ENGRAM_BASE
# the job is never an agent session, whatever the environment it was started from says
unset ENGRAM_SESSION ENGRAM_SESSION_TOKEN
ENGRAM=${ENGRAM:-engram}
day=$(date -u +%Y-%m-%d)
set -- dream --scope "$DREAM_SCOPE" --since "${DREAM_SINCE:-7d}" --key "${DREAM_KEY:-nightly}" --branch
if [ -n "${DREAM_TRANSCRIPTS:-}" ]; then set -- "$@" --transcripts "$DREAM_TRANSCRIPTS"; fi
# shellcheck disable=SC2086 # ENGRAM may be a command with arguments (node /path/to/bin/run.js)
$ENGRAM "$@"
if [ -n "${DREAM_PUSH:-}" ]; then
  git -C "$ENGRAM_BASE" push --quiet "$DREAM_PUSH" "dream/$day"
  echo "pushed dream/$day to $DREAM_PUSH"
fi
