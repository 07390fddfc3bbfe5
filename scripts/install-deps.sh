#!/usr/bin/env bash
# Installs what Trainyard needs to build, run its example and pass its tests on
# Debian 12 (bookworm). Idempotent: packages already present are left alone.
# Run as root or through sudo.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build git pkg-config
  # Qt 6 (qt6-tools-dev: Qt6LinguistTools for qt_add_translations; qt6-translations-l10n: qtbase_*.qm)
  # Qt 6 (Core, Concurrent, Sql+SQLite, Network, Widgets, Charts, Svg, Test; Concurrent ships with qt6-base-dev)
  qt6-base-dev qt6-tools-dev qt6-l10n-tools qt6-translations-l10n qt6-charts-dev libqt6sql6-sqlite qt6-svg-dev libqt6opengl6-dev libxkbcommon-dev qtkeychain-qt6-dev
  # other libraries from Debian
  libssh-dev libyaml-cpp-dev nlohmann-json3-dev libsqlite3-dev sqlite3
  # console frames compressed over SSH (agent protocol revision 8)
  liblz4-dev
  # the bundled example: PyTorch MLP on scikit-learn's digits, with a tqdm bar
  python3 python3-torch python3-sklearn python3-tqdm
  # tests: terminal oracle, GUI under Xvfb, real sshd, screenshots
  tmux xvfb xauth openssh-server openssh-client procps
  # tests: a CJK font so the zh_CN GUI test measures real glyph widths (issue #28)
  fonts-wqy-microhei
  # tests: a real Secret Service for remembered passphrases (QtKeychain)
  gnome-keyring dbus-daemon
  # tests: the .desktop file and the job spec MIME type (desktop-file-validate, update-mime-database)
  desktop-file-utils shared-mime-info
  # packaging: man pages from --help, the .deb's computed dependencies (file, dpkg-dev),
  # AppStream metainfo validation, zsh to check the zsh completion parses, lintian on the .deb
  help2man file dpkg-dev appstream zsh lintian
  # tests: the tree stays formatted by .clang-format (clang-format 14)
  clang-format
  # tests: a real Slurm cluster for the Slurm node kind (issue #26; tests/support/slurm/slurm-up.sh):
  # slurmctld and slurmd, the client commands (sbatch, squeue, sacct, ...), munge for their
  # authentication, and slurmdbd on a MariaDB server it starts itself, so sacct reports finished jobs
  slurm-wlm slurm-client munge slurmdbd mariadb-server
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "Installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# A second local user for the tests that check other users cannot read a
# user's database, consoles and runs.env (TestCliEndToEnd, issue #20).
if [ "$(id -u)" -eq 0 ] && ! id -u trainyard-other >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin trainyard-other
fi
