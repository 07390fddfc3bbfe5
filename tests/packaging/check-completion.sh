#!/bin/sh
# trainyardctl's bash completion, sourced into a real bash with COMP_WORDS /
# COMP_CWORD set as readline sets them, completes the real command names, the
# ids and names of the runs in a real database, node names, options and job
# spec files; its zsh completion parses.
# check-completion.sh SOURCE_DIR TRAINYARDCTL TRAINYARDD TRAINYARD-AGENT
set -eu
src=$1
tmp=$(mktemp -d)
export TRAINYARD_DAEMON=$3 TRAINYARD_AGENT=$4 HOME="$tmp/home" TRAINYARD_AGENT_STATE="$tmp/agent-state"
mkdir -p "$tmp/bin" "$HOME" "$tmp/specs/sub"
ln -s "$2" "$tmp/bin/trainyardctl"
export PATH="$tmp/bin:$PATH"
db=$tmp/db/trainyard.db
trap 'trainyardctl --db "$db" daemon stop >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
printf 'name: completion-probe\ncommand: "echo done"\n' > "$tmp/specs/job.yaml"
trainyardctl --db "$db" submit "$tmp/specs/job.yaml" --follow >/dev/null
id=$(trainyardctl --db "$db" ls --json | sed -n 's/^        "id": \([0-9]*\),$/\1/p')
[ -n "$id" ] || { echo "no run id in ls --json" >&2; exit 1; }
touch "$tmp/specs/notes.txt" "$tmp/specs/train.py"
zsh -n "$src/packaging/completions/_trainyardctl"
# complete WORD... : the candidates for the last word, one a line.
cat > "$tmp/complete.bash" <<SCRIPT
source "$src/packaging/completions/trainyardctl.bash"
COMP_WORDS=("\$@"); COMP_CWORD=\$((\$# - 1)); COMPREPLY=()
_trainyardctl
printf '%s\n' "\${COMPREPLY[@]}"
SCRIPT
complete() { bash "$tmp/complete.bash" trainyardctl "$@"; }
expect() { # expect WANTED CANDIDATES
    printf '%s\n' "$2" | grep -qx -- "$1" || { echo "completion lacks '$1'; got: $(echo $2)" >&2; exit 1; }
}
c=$(complete "")
for cmd in submit ls logs show cancel node queue daemon; do expect "$cmd" "$c"; done
[ "$(complete lo)" = "logs" ] || { echo "'lo' should complete to logs only, got: $(complete lo)" >&2; exit 1; }
c=$(complete --db "$db" logs "")
expect "$id" "$c"
expect completion-probe "$c"
c=$(complete --db "$db" show comp)
[ "$c" = completion-probe ] || { echo "show comp -> $c" >&2; exit 1; }
expect local "$(complete --db "$db" submit --node "")"
expect --follow "$(complete logs --f)"
expect --archived "$(complete ls --)"
c=$(cd "$tmp/specs" && complete submit "")
expect job.yaml "$c"; expect train.py "$c"; expect sub/ "$c"
if printf '%s\n' "$c" | grep -qx notes.txt; then echo "submit offers notes.txt" >&2; exit 1; fi
echo "completion ok (run $id)"
