#!/bin/sh
# ctest: trainyard-gpucheck's contract on any machine. With a usable GPU it
# must print one {"device":...,"uuid":"GPU-..."} line per visible device and
# end with {"done":true,...}; without one (CI) it must exit 3 naming the reason.
# Bad arguments exit 2. Usage: gpucheck_smoke.sh PATH/TO/trainyard-gpucheck
set -u
bin=$1
out=$("$bin" --bogus 2>&1); rc=$?
[ $rc -eq 2 ] || { echo "bad argument: want exit 2, got $rc: $out"; exit 1; }
echo "$out" | grep -q "unknown or incomplete argument '--bogus'" || { echo "bad argument message: $out"; exit 1; }
out=$("$bin" --seconds 1 --mem-mib 16 2>/tmp/gpucheck-smoke.err.$$); rc=$?
err=$(cat /tmp/gpucheck-smoke.err.$$); rm -f /tmp/gpucheck-smoke.err.$$
case $rc in
  0) echo "$out" | grep -Eq '^\{"device":0,"uuid":"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"' \
       || { echo "GPU present but no device line: $out"; exit 1; }
     echo "$out" | tail -n 1 | grep -q '^{"done":true' || { echo "no done line: $out"; exit 1; }
     echo "GPU machine: $out" ;;
  3) echo "$err" | grep -q "^trainyard-gpucheck: no CUDA device" || { echo "exit 3 without the reason: $err"; exit 1; }
     [ -z "$out" ] || { echo "printed devices but exited 3: $out"; exit 1; }
     echo "no GPU here, as expected on CI: $err" ;;
  *) echo "unexpected exit $rc: $out $err"; exit 1 ;;
esac
