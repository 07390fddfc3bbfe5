#!/bin/sh
# `cmake --install` of the build tree (as scripts/quickstart.sh does into
# ~/.local) gives a layout that works on its own: the installed trainyardctl
# finds the installed agent (nothing from the build tree, no TRAINYARD_AGENT)
# and runs a job; the GUI, the desktop entry, the MIME type and the icon are
# where the desktop looks for them.
set -eu
build=$1
tmp=$(mktemp -d)
# The service the installed trainyardctl started (found beside it) goes with the folder.
trap 'PATH="$tmp/prefix/bin:$PATH" trainyardctl --db "$tmp/db/trainyard.db" daemon stop >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/trainyardctl bin/trainyardd bin/trainyard-agent share/trainyard/examples/digits/job.yaml; do
    [ -e "$prefix/$f" ] || { echo "missing after install: $f" >&2; exit 1; }
done
if grep -q '^TRAINYARD_BUILD_GUI:BOOL=ON' "$build/CMakeCache.txt"; then
    for f in bin/trainyard share/applications/trainyard.desktop share/mime/packages/trainyard.xml \
             share/icons/hicolor/scalable/apps/io.trainyard.Trainyard.svg; do
        [ -e "$prefix/$f" ] || { echo "missing after install: $f" >&2; exit 1; }
    done
fi
unset TRAINYARD_AGENT TRAINYARD_DB
# Run from elsewhere, by PATH as the README's examples are typed.
cd "$tmp"
export PATH="$prefix/bin:$PATH" HOME="$tmp/home" TRAINYARD_AGENT_STATE="$tmp/agent-state"
version=$(trainyardctl --version)
case "$version" in "trainyardctl "*) ;; *) echo "unexpected --version: $version" >&2; exit 1 ;; esac
printf 'name: installed\ncommand: "echo acc=0.75; echo from the installed layout"\n' > job.yaml
out=$(trainyardctl --db "$tmp/db/trainyard.db" submit job.yaml --follow)
[ "$out" = "acc=0.75
from the installed layout" ] || { echo "unexpected console: $out" >&2; exit 1; }
trainyardctl --db "$tmp/db/trainyard.db" show installed | grep -q "^node       local$"
trainyardctl --db "$tmp/db/trainyard.db" show installed | grep -q "^state      succeeded (exit 0)$"
trainyardctl --db "$tmp/db/trainyard.db" daemon status | grep -q "^trainyardd .* serves $tmp/db/trainyard.db$"
echo "installed layout ok ($version)"
