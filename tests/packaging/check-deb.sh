#!/bin/sh
# The .deb, built by CPack from an already built Release tree, installed with
# apt on this machine (CI: a fresh Debian 12, root), and used from the
# installed files only: trainyardctl --version, the digits example through
# submit --follow on the local node, the GUI started offscreen and closed,
# and an agent deployed from /usr/bin to a test sshd host on 127.0.0.2.
# check-deb.sh BUILD_DIR   (scripts/test.sh runs it with build/ci; root only)
set -eu
build=$(cd "$1" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "check-deb: skipped (installing a .deb needs root)"; exit 0; }
tmp=$(mktemp -d)
cleanup() {
    [ -n "${sshd_pid:-}" ] && kill "$sshd_pid" 2>/dev/null || true
    /usr/bin/trainyardctl --db "$tmp/db/trainyard.db" daemon stop >/dev/null 2>&1 || true
    apt-get remove -y -qq trainyard >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "check-deb: $*" >&2; exit 1; }

(cd "$build" && rm -f trainyard_*.deb && cpack -G DEB >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$build"/trainyard_*.deb)
# Dependencies: computed ones (Qt, libssh, yaml-cpp) and the listed runtime ones.
depends=$(dpkg-deb -f "$deb" Depends)
for d in libqt6core6 libssh-4 libyaml-cpp0.7 openssh-client libqt6sql6-sqlite; do
    printf '%s\n' "$depends" | tr ',' '\n' | grep -q "^ *$d\b" || fail "Depends lacks $d: $depends"
done
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in usr/bin/trainyard usr/bin/trainyardctl usr/bin/trainyardd usr/bin/trainyard-agent \
         usr/share/applications/trainyard.desktop usr/share/icons/hicolor/scalable/apps/io.trainyard.Trainyard.svg \
         usr/share/metainfo/io.trainyard.Trainyard.metainfo.xml usr/share/mime/packages/trainyard.xml \
         usr/share/systemd/user/trainyardd.service usr/share/doc/trainyard/copyright \
         usr/share/man/man1/trainyard.1.gz usr/share/man/man1/trainyardctl.1.gz usr/share/man/man1/trainyardd.1.gz \
         usr/share/man/man1/trainyard-agent.1.gz usr/share/bash-completion/completions/trainyardctl \
         usr/share/zsh/vendor-completions/_trainyardctl usr/share/trainyard/examples/digits/job.yaml; do
    printf '%s\n' "$contents" | grep -qx "\./$f" || fail "the .deb lacks /$f"
done

# Man pages and the changelog compressed as Debian wants them: gzip -9n
# (header: deflate, no file name, no time stamp, maximum compression).
for f in usr/share/man/man1/trainyard.1.gz usr/share/man/man1/trainyardctl.1.gz usr/share/man/man1/trainyardd.1.gz \
         usr/share/man/man1/trainyard-agent.1.gz usr/share/doc/trainyard/changelog.gz; do
    header=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./$f" | head -c 9 | od -An -tx1 | tr -d ' \n')
    [ "$header" = 1f8b08000000000002 ] || fail "/$f is not compressed with gzip -9n (header $header)"
done
printf '%s\n' "$contents" | grep -q '^\./usr/share/man/man1/[^/]*\.1$' && fail "an uncompressed man page in the .deb"
# lintian: no error and no warning (what the package overrides is in
# packaging/lintian-overrides, each with its reason).
lintian --fail-on error,warning "$deb" >"$tmp/lintian.log" 2>&1 || { cat "$tmp/lintian.log" >&2; fail "lintian found errors or warnings"; }
echo "check-deb: lintian clean"

DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log" >&2; fail "apt-get install failed"; }
grep -qx 'ExecStart=/usr/bin/trainyardd --persist' /usr/share/systemd/user/trainyardd.service \
    || fail "the user unit does not start /usr/bin/trainyardd"
[ -f /usr/share/man/man1/trainyardctl.1.gz ] || fail "no /usr/share/man/man1/trainyardctl.1.gz installed"
zcat /usr/share/man/man1/trainyardctl.1.gz | grep -q "^\.SH COMMANDS" || fail "trainyardctl.1.gz lacks its COMMANDS section"

# From here on only what the package installed: a bare PATH, nothing from the build.
unset TRAINYARD_AGENT TRAINYARD_DAEMON TRAINYARD_DB
export PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME="$tmp/home" TRAINYARD_AGENT_STATE="$tmp/agent-state"
mkdir -p "$HOME"
cd "$tmp"
db=$tmp/db/trainyard.db
version=$(trainyardctl --version)
[ "$version" = "trainyardctl $(dpkg-query -W -f='${Version}' trainyard)" ] || fail "unexpected --version: $version"

# The digits example as shipped (15 epochs of a small MLP: seconds on a CPU).
if python3 -c 'import torch, sklearn' 2>/dev/null; then
    trainyardctl --db "$db" submit /usr/share/trainyard/examples/digits/job.yaml --follow >"$tmp/digits.log" 2>&1 \
        || { tail -20 "$tmp/digits.log" >&2; fail "the digits example failed"; }
    trainyardctl --db "$db" show digits-mlp | grep -q '^state      succeeded (exit 0)$' || fail "digits-mlp did not succeed"
    trainyardctl --db "$db" show digits-mlp | grep -q 'node       local' || fail "digits-mlp not on the local node"
    trainyardctl --db "$db" metrics digits-mlp --csv | grep -q . || fail "digits-mlp recorded no metrics"
    echo "check-deb: digits example ok"
else
    echo "check-deb: digits example skipped (no python3-torch / python3-sklearn)"
fi

# The GUI, offscreen: it must still be running when closed after 5 s.
rc=0
QT_QPA_PLATFORM=offscreen timeout 5 trainyard --db "$db" >"$tmp/gui.log" 2>&1 || rc=$?
[ "$rc" -eq 124 ] || { cat "$tmp/gui.log" >&2; fail "the GUI exited by itself (status $rc) instead of running until closed"; }

# An agent deployed from /usr/bin/trainyard-agent to a real sshd on 127.0.0.2.
if [ -x /usr/sbin/sshd ] && ip addr show lo 2>/dev/null | grep -q '127.0.0.1/8'; then
    s=$tmp/sshd
    mkdir -p "$s" /run/sshd
    ssh-keygen -q -t ed25519 -N '' -f "$s/host_ed25519_key"
    ssh-keygen -q -t ed25519 -N '' -f "$s/id_ed25519"
    cp "$s/id_ed25519.pub" "$s/authorized_keys"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.2",0)); print(s.getsockname()[1])')
    cat >"$s/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.2
HostKey $s/host_ed25519_key
PidFile $s/sshd.pid
AuthorizedKeysFile $s/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin yes
Subsystem sftp internal-sftp
LogLevel ERROR
CONF
    /usr/sbin/sshd -D -e -f "$s/sshd_config" 2>"$s/sshd.log" &
    sshd_pid=$!
    printf 'Host ws1\n  HostName 127.0.0.2\n  Port %s\n  User root\n  IdentityFile %s/id_ed25519\n  UserKnownHostsFile %s/known_hosts\n' \
        "$port" "$s" "$s" >"$s/ssh_config"
    export TRAINYARD_SSH_CONFIG=$s/ssh_config
    # The service (started by the runs above) reads the SSH config of its own
    # environment: start it again with this one.
    trainyardctl --db "$db" daemon stop >/dev/null 2>&1 || true
    for i in 1 2 3 4 5 6 7 8 9 10; do
        ssh -F "$s/ssh_config" -o BatchMode=yes -o StrictHostKeyChecking=accept-new ws1 true 2>/dev/null && break
        sleep 0.5
    done
    trainyardctl --db "$db" node add ws1 --host ws1 --accept-new-host-key >"$tmp/node.log" 2>&1 \
        || { cat "$tmp/node.log" "$s/sshd.log" >&2; fail "node add ws1 failed"; }
    # Deployed as ~/.cache/trainyard/agent/<version>-<sha256 prefix>/trainyard-agent
    # of the remote user (core/nodes/AgentDeploy.h): the installed binary's hash.
    sha=$(sha256sum /usr/bin/trainyard-agent | cut -c1-16)
    deployed=$(ssh -F "$s/ssh_config" -o BatchMode=yes ws1 "ls -d ~/.cache/trainyard/agent/*-$sha/trainyard-agent" 2>/dev/null) \
        || fail "no agent with the installed agent's hash ($sha) was deployed to ws1"
    remote=$(ssh -F "$s/ssh_config" -o BatchMode=yes ws1 "sha256sum '$deployed'" | cut -d' ' -f1)
    [ "$remote" = "$(sha256sum /usr/bin/trainyard-agent | cut -d' ' -f1)" ] \
        || fail "the agent on ws1 ($deployed) is not the installed /usr/bin/trainyard-agent"
    printf 'name: on-ws1\ncommand: "echo from ws1"\n' >"$tmp/ws1.yaml"
    out=$(timeout 60 trainyardctl --db "$db" submit "$tmp/ws1.yaml" --node ws1 --follow 2>/dev/null) || true
    [ "$out" = "from ws1" ] || fail "a run on ws1 printed: $out"
    echo "check-deb: agent deployed from /usr/bin to ws1 ($deployed) and ran a job"
else
    echo "check-deb: agent deployment skipped (no /usr/sbin/sshd)"
fi
echo "check-deb ok: $(basename "$deb") ($version)"
