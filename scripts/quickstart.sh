#!/usr/bin/env bash
# Quick start (1): install what is missing, build in Release, and open the GUI
# with the bundled digits example already submitted on the local node.
# Extra arguments go to the GUI (e.g. --db /tmp/demo.db).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

cmake --preset release
cmake --build --preset release -j "$(nproc)"

exec build/release/app/gui/trainyard --submit resources/examples/digits/job.yaml "$@"
