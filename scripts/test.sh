#!/usr/bin/env bash
# Quick start (2): install what is missing, build with tests, run the whole
# suite with ctest. Also builds core, CLI and agent with Qt Gui switched off,
# which proves the core library never needs a GUI module.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

jobs=$(nproc)
cmake --preset ci
cmake --build --preset ci -j "$jobs"

cmake --preset headless >/dev/null
cmake --build --preset headless -j "$jobs"

# Tests that use a display run under Xvfb; everything else is offscreen.
xvfb-run -a -s "-screen 0 1600x900x24" ctest --preset ci -j "$jobs"

# The .deb of the ci build (CPack), installed with apt and used from /usr:
# --version, the digits example, the GUI offscreen, an agent deployed to a
# test sshd host (tests/packaging/check-deb.sh; root only, as CI is).
tests/packaging/check-deb.sh build/ci
