#!/bin/sh
# app/cli/JSON.md says every field each `--json` command prints, and prints
# nothing it does not (issue #28): runs each command on a real database (a run
# that ended with metrics, one running, one held behind it, the service),
# and compares the field names of the output with the document's tables.
# Usage: check-cli-json.sh SOURCE_DIR TRAINYARDCTL TRAINYARDD AGENT
set -eu
src=$1
ctl=$(realpath "$2") daemon=$(realpath "$3") agent=$(realpath "$4")
tmp=$(mktemp -d)
db="$tmp/t.db"
cleanup() {
  "$ctl" --db "$db" cancel blocker >/dev/null 2>&1 || true
  "$ctl" --db "$db" daemon stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
export TRAINYARD_DB="$db" TRAINYARD_AGENT="$agent" TRAINYARD_DAEMON="$daemon" HOME="$tmp/home" TRAINYARD_AGENT_STATE="$tmp/agent-state"
mkdir -p "$HOME"
cat >"$tmp/ok.yaml" <<'SPEC'
name: json-check
params: {lr: 0.01}
command: ["/bin/sh", "-c", "echo step=1 loss=0.5; echo step=2 loss=0.25"]
SPEC
# A run holding every CPU of this machine, and one waiting behind it, held.
cpus=$(nproc)
printf 'name: blocker\ncommand: ["sleep", "300"]\nresources: {cpus: %s}\n' "$cpus" >"$tmp/blocker.yaml"
printf 'name: waits\ncommand: ["true"]\nresources: {cpus: 1}\n' >"$tmp/waits.yaml"
timeout 120 "$ctl" submit "$tmp/ok.yaml" --follow >/dev/null
"$ctl" daemon start >/dev/null
"$ctl" submit "$tmp/blocker.yaml" >/dev/null
"$ctl" submit "$tmp/waits.yaml" >/dev/null
"$ctl" hold waits >/dev/null
out="$tmp/out"
mkdir -p "$out"
"$ctl" ls --json >"$out/ls.json"
"$ctl" show json-check --json >"$out/show.json"
"$ctl" metrics json-check --json >"$out/metrics.json"
"$ctl" metrics json-check --attempts --json >"$out/metrics-attempts.json"
"$ctl" queue --json >"$out/queue.json"
# A resource pool (issue #25) on a label no node here carries: listed, and it limits nobody.
printf '{"pools": {"a100": {"labels": ["json-check"], "quota": {"users": {"default": 8, "alice": 16}}, "borrow_limit": 4}}}\n' \
  >"$db.scheduler.json"
"$ctl" policy --json >"$out/policy.json"
"$ctl" daemon status --json >"$out/status.json"
"$ctl" node ls --json >"$out/nodes.json"
/usr/bin/env python3 - "$src/app/cli/JSON.md" "$out" <<'PY'
import json, re, sys
doc, out = sys.argv[1], sys.argv[2]
sections, cur, table = {}, None, 0
for line in open(doc, encoding="utf-8"):
    m = re.match(r"^## `([^`]*)`", line)
    if m:
        cur, table = m.group(1), 0
        sections[cur] = [set()]
        continue
    if cur and line.startswith("| field |"):
        table += 1
        if table > 1:
            sections[cur].append(set())
    m = re.match(r"^\| `([a-z_]+)` \|", line)
    if cur and m:
        sections[cur][-1].add(m.group(1))
def load(name):
    return json.load(open(f"{out}/{name}", encoding="utf-8"))
def keys(objs):
    s = set()
    for o in objs:
        s |= set(o)
    return s
ls, show, metrics = load("ls.json"), load("show.json"), load("metrics.json")
queue, policy, status, nodes = load("queue.json"), load("policy.json"), load("status.json"), load("nodes.json")
points = [p for series in metrics.values() for p in series]
attempt_points = [p for series in load("metrics-attempts.json").values() for p in series]
checks = [
    ("ls --json", 0, keys(ls), len(ls) >= 2),
    ("show RUN --json", None, set(show), True),
    ("metrics RUN --json", 0, keys(points), len(points) == 2),
    ("metrics RUN --attempts --json", 0, keys(attempt_points), len(attempt_points) == 2),
    ("queue --json", 0, set(queue), True),
    ("queue --json", 1, keys(queue["runs"]), len(queue["runs"]) == 1),
    ("policy --json", 0, set(policy), True),
    ("policy --json", 1, keys(policy["pools"].values()), len(policy["pools"]) == 1),
    ("daemon status --json", 0, set(status), status.get("running") is True),
    ("node ls --json", 0, keys(nodes), len(nodes) >= 1),
]
bad = 0
for section, table, got, enough in checks:
    if section not in sections:
        print(f"JSON.md has no section `{section}`"); bad += 1; continue
    want = sections[section][0] | sections["ls --json"][0] if table is None else sections[section][table]
    if not enough:
        print(f"{section}: the output has too few entries to check"); bad += 1
    if got - want:
        print(f"{section}: printed but not in JSON.md: {sorted(got - want)}"); bad += 1
    if want - got:
        print(f"{section}: in JSON.md but not printed: {sorted(want - got)}"); bad += 1
if bad:
    sys.exit(1)
print(f"{len(checks)} outputs match app/cli/JSON.md")
PY
