#!/bin/sh
# The tree stays formatted by the root .clang-format (issue #23): every C++
# file under app, core, ui and tests (not the recorded inputs in tests/data) is
# unchanged by clang-format 14, Debian 12's. Another major version formats a
# few constructs differently, so it skips (exit 77) rather than fail.
set -eu
src=$1
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null || { echo "no $cf: install clang-format" >&2; exit 1; }
major=$("$cf" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$major" = 14 ] || { echo "clang-format $major, not 14: skipped" >&2; exit 77; }
cd "$src"
list=$(find app core ui tests -path tests/data -prune -o \( -name '*.cpp' -o -name '*.h' \) -print | sort)
# One process for all files; its diagnostics name each file:line:col that differs.
out=$("$cf" --style=file --dry-run --Werror $list 2>&1) && rc=0 || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/not formatted: \1 (run: clang-format -i \1)/p' | sort -u >&2
  echo "$out" | grep -v 'code should be clang-formatted' | grep 'error' >&2 || true
  exit 1
fi
echo "$(echo "$list" | wc -l) files formatted"
