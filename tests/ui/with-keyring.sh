#!/bin/sh
# Runs "$@" inside a private D-Bus session bus with a fresh, unlocked
# gnome-keyring as the Secret Service, under a throw-away HOME, so keychain
# tests use a real keychain and never touch the user's.
set -eu
home=$(mktemp -d /tmp/ty-keyring-XXXXXX)
trap 'rm -rf "$home"' EXIT
export HOME="$home" XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" XDG_RUNTIME_DIR="$home/run"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
dbus-run-session -- sh -c '
  printf %s "ty-test-login-password" | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 99
  exec "$@"' sh "$@"
