#!/bin/sh
# The trainyard-agent binary must run on nodes older than the build machine:
# no dynamic libstdc++, and no glibc symbol version newer than MAX.
# Usage: check-glibc.sh AGENT MAX (e.g. 2.34)
set -eu
agent=$1
max=$2
needed=$(objdump -p "$agent" | awk '/NEEDED/ {print $2}' | sort | tr '\n' ' ')
echo "NEEDED: $needed"
case " $needed " in
*libstdc++*) echo "FAIL: $agent needs libstdc++ dynamically (it must be linked in)"; exit 1 ;;
esac
newest=$(objdump -T "$agent" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
echo "newest glibc symbol version: $newest (allowed: $max)"
[ -n "$newest" ] || { echo "FAIL: no glibc symbol versions found in $agent"; exit 1; }
if [ "$(printf '%s\n%s\n' "$newest" "$max" | sort -V | tail -1)" != "$max" ]; then
    echo "FAIL: $agent needs glibc $newest; symbols:"
    objdump -T "$agent" | grep "GLIBC_$newest"
    exit 1
fi
echo "OK"
