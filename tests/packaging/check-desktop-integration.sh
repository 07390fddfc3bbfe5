#!/bin/sh
# The .desktop file validates and claims only Trainyard's own job spec type,
# which a real shared-mime-info database built from packaging/ resolves for
# *.trainyard.yaml and not for other YAML, Python or shell files.
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
desktop-file-validate --no-hints "$src/packaging/trainyard.desktop"
grep -qx 'Exec=trainyard %F' "$src/packaging/trainyard.desktop"
grep -qx 'MimeType=application/x-trainyard-job+yaml;' "$src/packaging/trainyard.desktop" || {
    echo "trainyard.desktop must claim only application/x-trainyard-job+yaml" >&2; exit 1; }
mkdir -p "$tmp/mime/packages"
cp /usr/share/mime/packages/freedesktop.org.xml "$tmp/mime/packages/"
cp "$src/packaging/trainyard-mime.xml" "$tmp/mime/packages/trainyard.xml"
update-mime-database "$tmp/mime"
grep -q '^60:application/x-trainyard-job+yaml:\*\.trainyard\.yaml$' "$tmp/mime/globs2"
grep -q '^60:application/x-trainyard-job+yaml:\*\.trainyard\.yml$' "$tmp/mime/globs2"
grep -q '^application/x-trainyard-job+yaml application/x-yaml$' "$tmp/mime/subclasses"
if grep 'application/x-trainyard-job+yaml' "$tmp/mime/globs2" | grep -v 'trainyard\.y'; then
    echo "the job spec type must match only *.trainyard.yaml / *.trainyard.yml" >&2; exit 1
fi
echo "desktop integration ok"
