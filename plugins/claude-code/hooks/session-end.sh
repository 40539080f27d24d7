#!/bin/sh
# SessionEnd hook: append one line (time, session id, reason, cwd) to ~/.skillgrad/session-end.log.
# It records that a session ended and does nothing else: no model call, no harvest, no network.
log_dir="${HOME}/.skillgrad"
input=$(head -c 65536 | tr -d '\r\n\t')
field() { printf '%s' "$input" | sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\([^\"]*\)\".*/\1/p"; }
mkdir -p "$log_dir" || exit 0
printf '%s\tsession_end\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(field session_id)" \
  "$(field reason)" "$(field cwd)" >> "$log_dir/session-end.log"
exit 0
