#!/bin/sh
# The .desktop file validates and claims only Trainyard's own job spec type,
# which a real shared-mime-info database built from packaging/ resolves for
# *.trainyard.yaml and not for other YAML, Python or shell files.
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Clean: no error, warning or hint.
out=$(desktop-file-validate "$src/packaging/trainyard.desktop" 2>&1)
[ -z "$out" ] || { echo "desktop-file-validate: $out" >&2; exit 1; }
# AppStream metainfo: valid under --strict, and complete (licence, URL,
# releases, content rating, screenshots that are the repository's own).
meta=$src/packaging/io.trainyard.Trainyard.metainfo.xml
appstreamcli validate --strict --no-net "$meta"
grep -q '<project_license>GPL-3.0-or-later</project_license>' "$meta"
grep -q '<url type="homepage">https://' "$meta"
grep -q '<content_rating type="oars-1.1"' "$meta"
grep -q '<release version="[0-9.]*" date="[0-9-]*">' "$meta"
n=0
for shot in $(sed -n 's|.*<image>.*/screenshots/\([^<]*\)</image>.*|\1|p' "$meta"); do
    [ -f "$src/resources/screenshots/$shot" ] || { echo "metainfo screenshot $shot is not in resources/screenshots" >&2; exit 1; }
    n=$((n + 1))
done
[ "$n" -ge 1 ] || { echo "metainfo has no screenshot" >&2; exit 1; }
# Licence in the repository and in Debian's copyright format.
grep -q 'GNU GENERAL PUBLIC LICENSE' "$src/LICENSE" && grep -q 'Version 3, 29 June 2007' "$src/LICENSE"
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/$' "$src/packaging/copyright"
grep -q '^License: GPL-3.0-or-later$' "$src/packaging/copyright"
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
