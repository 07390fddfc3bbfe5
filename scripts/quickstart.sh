#!/usr/bin/env bash
# Quick start (1): install what is missing, build in Release, install
# trainyard, trainyardctl, trainyardd and trainyard-agent into ~/.local (bin/, with the
# .desktop file, the job spec MIME type and the icon under share/), and open
# the GUI with the bundled digits example already submitted on the local node.
# TRAINYARD_PREFIX=DIR installs there instead of ~/.local.
# Extra arguments go to the GUI (e.g. --db /tmp/demo.db).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

cmake --preset release
cmake --build --preset release -j "$(nproc)"

prefix="${TRAINYARD_PREFIX:-$HOME/.local}"
cmake --install build/release --prefix "$prefix"
# The desktop finds the new file type and the .desktop file's claim on it.
if command -v update-mime-database >/dev/null; then update-mime-database "$prefix/share/mime"; fi
if command -v update-desktop-database >/dev/null; then update-desktop-database -q "$prefix/share/applications" || true; fi

echo
echo "Installed trainyard, trainyardctl, trainyardd and trainyard-agent in $prefix/bin"
echo "  (desktop entry, MIME type and icon under $prefix/share; examples in $prefix/share/trainyard/examples)"
case ":$PATH:" in
  *":$prefix/bin:"*) echo "$prefix/bin is on your PATH: trainyardctl ls works in any shell." ;;
  *) echo "$prefix/bin is NOT on your PATH yet. Add it (then open a new shell):"
     echo "  echo 'export PATH=\"$prefix/bin:\$PATH\"' >> ~/.profile" ;;
esac
echo

exec "$prefix/bin/trainyard" --submit resources/examples/digits/job.yaml "$@"
