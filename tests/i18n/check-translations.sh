#!/bin/sh
# Every GUI string has a finished translation in every translations/*.ts, and no
# translation is left for a string the sources no longer have (issue #28).
# Runs lupdate over ui/ and app/gui/main.cpp into a temporary copy of each .ts,
# so the committed files are never touched.
# Usage: check-translations.sh SOURCE_DIR LUPDATE
set -eu
src=$1
lupdate=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for ts in "$src"/translations/*.ts; do
  copy="$tmp/$(basename "$ts")"
  cp "$ts" "$copy"
  "$lupdate" -silent -locations none "$src/ui" "$src/app/gui/main.cpp" -ts "$copy" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
  unfinished=$(grep -c 'type="unfinished"' "$copy" || true)
  vanished=$(grep -cE 'type="(vanished|obsolete)"' "$copy" || true)
  total=$(grep -c '<message' "$copy" || true)
  echo "$(basename "$ts"): $total messages, $unfinished unfinished, $vanished vanished"
  if [ "$unfinished" -ne 0 ] || [ "$vanished" -ne 0 ]; then
    grep -B3 -E 'type="(unfinished|vanished|obsolete)"' "$copy" | grep '<source>' | head -20
    status=1
  fi
  [ "$total" -gt 0 ] || status=1
done
exit $status
