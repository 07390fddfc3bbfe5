#!/bin/sh
# Every trainyardctl command prints its own help (`COMMAND --help`, `help
# COMMAND`): its usage line and its options, not the global help.
set -eu
ctl=$1
global=$($ctl --help)
# command  option its help must name
while read -r cmd opt; do
    h=$($ctl "$cmd" --help)
    [ "$h" != "$global" ] || { echo "$cmd --help prints the global help" >&2; exit 1; }
    printf '%s\n' "$h" | head -n1 | grep -q "^Usage: trainyardctl \[--db PATH\] $cmd" || {
        echo "$cmd --help: unexpected usage line: $(printf '%s\n' "$h" | head -n1)" >&2; exit 1; }
    printf '%s\n' "$h" | grep -q -- "^  $opt" || { echo "$cmd --help does not name $opt" >&2; exit 1; }
    [ "$($ctl help "$cmd")" = "$h" ] || { echo "help $cmd differs from $cmd --help" >&2; exit 1; }
done <<'LIST'
validate --db
submit --follow
ls --archived
show --json
artifacts --download
logs --follow
cancel --grace
metrics --key
rm --db
rename --db
tag --db
note --db
archive --db
rerun --param
import --db
queue --json
hold --db
priority --db
policy --queue
policy --preemption
daemon --lines
node --accept-new-host-key
node --kind
pipeline --param
cache --older-than
LIST
# Aliases get their command's help; the helps differ from one another.
$ctl release --help | grep -q '^Usage: trainyardctl \[--db PATH\] hold RUN | release RUN$'
[ "$($ctl logs --help)" != "$($ctl ls --help)" ]
$ctl logs --help | grep -q -- '--follow'
! $ctl logs --help | grep -q -- '--archived'
echo "per-command help ok"
