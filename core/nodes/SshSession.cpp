#include "SshSession.h"

#include "core/common/ShellQuote.h"

#include "core/nodes/NodesLog.h"
#include "core/nodes/SshAgentFilter.h"
#include "core/nodes/SshKnownHosts.h"
#include "core/nodes/SshPassphraseProvider.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSocketNotifier>
#include <QTimer>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace ty {
namespace {

constexpr int kTickMs = 500; // safety net besides the socket notifiers
// dopoll rounds per service() while each handles an event (a read, or a
// write such as a window adjust): libssh reads at most 4 KiB per round, so
// a service() reads at most 256 KiB before writes are flushed again.
constexpr int kMaxPollRounds = 64;
// Within service(), channel data is handed on in batches of at most this
// many bytes (a single larger packet alone), once per service() otherwise:
// one queued event per batch, not per packet.
constexpr qsizetype kReceivedBatch = 256 * 1024;

QString getStringOption(ssh_session s, ssh_options_e which)
{
    char* value = nullptr;
    if (ssh_options_get(s, which, &value) != SSH_OK || !value)
        return {};
    QString out = QString::fromUtf8(value);
    ssh_string_free_char(value);
    return out;
}

// ssh_new() in libssh 0.10 lists %d/id_ed25519, %d/id_ecdsa, %d/id_rsa (%d:
// the ~/.ssh directory); an IdentityFile of the config comes before them.
constexpr const char* kLibsshFirstDefaultIdentity = "%d/id_ed25519";
constexpr const char* kLibsshDefaultIdentities[] = {"id_ed25519", "id_ecdsa", "id_rsa"};

// Reading one private key file: libssh's passphrase callback knows only its
// userdata, so the file it is reading travels there.
struct KeyRead {
    SshPassphraseProvider* provider = nullptr; // null: batch mode, never asks
    QString node;
    QString file;
    bool encrypted = false; // libssh asked for a passphrase
    bool given = false;     // the last question got an answer
    int asked = 0;          // questions so far
};

int onKeyPassphrase(const char*, char* buf, size_t len, int, int, void* userdata)
{
    auto* read = static_cast<KeyRead*>(userdata);
    read->encrypted = true;
    read->given = false;
    if (!read->provider || len == 0)
        return -1;
    // libssh's own prompt is "Passphrase" (OpenSSH format) or "Passphrase for
    // private key:" (PEM): neither says which key. OpenSSH's does.
    ++read->asked;
    std::optional<QByteArray> p
            = read->provider->passphrase(read->node, QStringLiteral("Enter passphrase for key '%1':").arg(read->file));
    read->given = p.has_value();
    if (!p || size_t(p->size()) >= len) {
        if (p)
            p->fill('\0');
        return -1;
    }
    std::memcpy(buf, p->constData(), size_t(p->size()));
    buf[p->size()] = '\0';
    p->fill('\0');
    return 0;
}

// The private key of `read.file` (null if it cannot be read or decrypted).
// As OpenSSH does, a passphrase that does not decrypt it is asked for again,
// three questions at most; no answer (batch mode, cancelled) ends it.
ssh_key readPrivateKey(KeyRead& read)
{
    const QByteArray path = QFile::encodeName(read.file);
    for (int attempt = 0; attempt < 3; ++attempt) {
        read.given = false;
        ssh_key key = nullptr;
        if (ssh_pki_import_privkey_file(path.constData(), nullptr, &onKeyPassphrase, &read, &key) == SSH_OK)
            return key;
        ssh_key_free(key);
        if (!read.encrypted || !read.given)
            return nullptr;
    }
    return nullptr;
}

// The public half of `read.file`: FILE.pub, else the key file itself
// (OpenSSH's format keeps it in clear), else derived from the private key,
// which is then left in `*priv` for the caller to free (reading it may have
// asked for the passphrase; a KeyRead without a provider never asks). False,
// with nothing left to free, when none of them can be read.
bool readPublicKey(KeyRead& read, ssh_key* pub, ssh_key* priv)
{
    *pub = nullptr;
    *priv = nullptr;
    const QByteArray path = QFile::encodeName(read.file);
    for (const QByteArray& candidate : {QByteArray(path + ".pub"), path}) {
        if (ssh_pki_import_pubkey_file(candidate.constData(), pub) == SSH_OK)
            return true;
        ssh_key_free(*pub);
        *pub = nullptr;
    }
    *priv = readPrivateKey(read);
    if (*priv && ssh_pki_export_privkey_to_pubkey(*priv, pub) == SSH_OK)
        return true;
    ssh_key_free(*pub);
    ssh_key_free(*priv);
    *pub = nullptr;
    *priv = nullptr;
    return false;
}

// The public key blob of an identity file as OpenSSH finds it without a
// passphrase (readPublicKey, never asking).
std::optional<QByteArray> publicKeyBlob(const QString& file)
{
    KeyRead read{nullptr, {}, file}; // no provider: batch mode
    ssh_key pub = nullptr;
    ssh_key priv = nullptr;
    if (!readPublicKey(read, &pub, &priv))
        return std::nullopt;
    ssh_key_free(priv);
    char* base64 = nullptr;
    const bool exported = ssh_pki_export_pubkey_base64(pub, &base64) == SSH_OK && base64;
    ssh_key_free(pub);
    if (!exported)
        return std::nullopt;
    QByteArray blob = QByteArray::fromBase64(base64);
    ssh_string_free_char(base64);
    return blob;
}

// The key blob of a certificate file (`type base64 [comment]`, one line).
std::optional<QByteArray> certificateBlob(const QString& file)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QList<QByteArray> fields = f.readLine(64 * 1024).simplified().split(' ');
    if (fields.size() < 2 || !fields[0].contains("-cert-"))
        return std::nullopt;
    const auto decoded = QByteArray::fromBase64Encoding(fields[1], QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.isEmpty())
        return std::nullopt;
    return decoded.decoded;
}

// The names of libssh's SSH_AUTH_METHOD_* bits, as servers list them.
QString authMethodNames(int methods)
{
    QStringList names;
    const std::pair<int, const char*> known[] = {{SSH_AUTH_METHOD_PUBLICKEY, "publickey"},
            {SSH_AUTH_METHOD_GSSAPI_MIC, "gssapi-with-mic"}, {SSH_AUTH_METHOD_INTERACTIVE, "keyboard-interactive"},
            {SSH_AUTH_METHOD_PASSWORD, "password"}, {SSH_AUTH_METHOD_HOSTBASED, "hostbased"}};
    for (const auto& [bit, name] : known)
        if (methods & bit)
            names << QLatin1String(name);
    return names.isEmpty() ? QStringLiteral("none named") : names.join(QStringLiteral(", "));
}

// Keyboard-interactive limits: rounds in all (those without prompts
// included), rounds with prompts (each asks the user), and how long the
// server may take to reply to answers (a Duo push waits for the phone),
// beyond the session's own timeout.
constexpr int kMaxKbdintRounds = 16;
constexpr int kMaxKbdintQuestionRounds = 4;
constexpr qint64 kKbdintReplyMs = 120000;

// ssh_session_is_known_server's verdict for the entries under `name` (a
// HostKeyAlias) rather than libssh's own `[host]:port`, with libssh's own
// line parser and matching (plain, hashed, patterns): the user's known_hosts
// first, then the global one. The key of the same type but different is
// CHANGED, only keys of other types OTHER; a missing file holds nothing.
// Marker lines (@cert-authority, @revoked) are passed over, as libssh 0.10
// does, and so are lines it cannot parse.
ssh_known_hosts_e knownHostsStateUnder(
        const QByteArray& name, ssh_key serverKey, const QString& userFile, const QString& globalFile)
{
    auto stateIn = [&](const QString& path) {
        QFile f(path);
        if (path.isEmpty() || !f.open(QIODevice::ReadOnly))
            return SSH_KNOWN_HOSTS_UNKNOWN;
        bool changed = false;
        bool other = false;
        while (!f.atEnd()) {
            const QByteArray line = f.readLine().simplified(); // libssh splits on single spaces only
            if (line.isEmpty() || line.startsWith('#') || line.startsWith('@'))
                continue;
            ssh_knownhosts_entry* entry = nullptr;
            if (ssh_known_hosts_parse_line(name.constData(), line.constData(), &entry) != SSH_OK || !entry) {
                ssh_knownhosts_entry_free(entry);
                continue; // another host (SSH_AGAIN), or a line libssh cannot read
            }
            const bool same = ssh_key_cmp(serverKey, entry->publickey, SSH_KEY_CMP_PUBLIC) == 0;
            const bool sameType = ssh_key_type(serverKey) == ssh_key_type(entry->publickey);
            ssh_knownhosts_entry_free(entry);
            if (same)
                return SSH_KNOWN_HOSTS_OK;
            (sameType ? changed : other) = true;
        }
        return changed ? SSH_KNOWN_HOSTS_CHANGED : other ? SSH_KNOWN_HOSTS_OTHER : SSH_KNOWN_HOSTS_UNKNOWN;
    };
    const ssh_known_hosts_e user = stateIn(userFile);
    if (user == SSH_KNOWN_HOSTS_OK)
        return user;
    const ssh_known_hosts_e global = stateIn(globalFile);
    if (global != SSH_KNOWN_HOSTS_UNKNOWN)
        return global;
    return user;
}

} // namespace

SshSession::SshSession(SshNodeOptions options, std::shared_ptr<SshPassphraseProvider> passphrases, QObject* parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_passphrases(std::move(passphrases))
{ }

SshSession::~SshSession()
{
    freeAll(true);
}

QString SshSession::where() const
{
    QString target = m_resolvedHost.isEmpty() ? m_options.host : m_resolvedHost;
    if (m_resolvedPort > 0)
        target += u':' + QString::number(m_resolvedPort);
    if (!m_resolvedUser.isEmpty())
        target = m_resolvedUser + u'@' + target;
    if (m_options.name.isEmpty() || m_options.name == m_options.host)
        return QStringLiteral("%1 (%2)").arg(m_options.host, target);
    return QStringLiteral("node %1 (%2 = %3)").arg(m_options.name, m_options.host, target);
}

void SshSession::start()
{
    if (m_session || m_finished)
        return;
    if (auto r = connectAndLogin(); !r) {
        finish(r.error().message, r.error().kind);
        return;
    }
    QString agent = m_options.remoteAgentPath;
    if (!m_options.deployAgentFrom.isEmpty()) {
        auto d = deployAgent(m_session, m_options.deployAgentFrom, m_options.remoteCacheDir, m_options.name);
        if (!d) {
            finish(d.error().message);
            return;
        }
        agent = d->remotePath;
        Q_EMIT deployed(*d);
    }
    QStringList parts;
    if (!m_options.agentEnv.isEmpty()) {
        parts << QStringLiteral("env");
        for (auto it = m_options.agentEnv.cbegin(); it != m_options.agentEnv.cend(); ++it)
            parts << shellQuote(it.key() + u'=' + it.value());
    }
    parts << shellQuote(agent) << QStringLiteral("--stdio");
    for (const QString& a : std::as_const(m_options.agentArgs))
        parts << shellQuote(a);
    m_command = parts.join(u' ');
    if (auto r = openAgentChannel(); !r) {
        finish(r.error().message);
        return;
    }

    ssh_set_blocking(m_session, 0);
    m_event = ssh_event_new();
    if (!m_event || ssh_event_add_session(m_event, m_session) != SSH_OK) {
        finish(QStringLiteral("%1: cannot set up the SSH event loop").arg(where()));
        return;
    }
    const int fd = ssh_get_fd(m_session);
    if (getStringOption(m_session, SSH_OPTIONS_PROXYCOMMAND).isEmpty()) {
        // Dead links are also found by NodeHealth; this catches them when idle.
        int on = 1, idle = 10, interval = 5, count = 3;
        ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    }
    m_readNotifier = new QSocketNotifier(qintptr(fd), QSocketNotifier::Read, this);
    connect(m_readNotifier, &QSocketNotifier::activated, this, &SshSession::service);
    m_writeNotifier = new QSocketNotifier(qintptr(fd), QSocketNotifier::Write, this);
    m_writeNotifier->setEnabled(false);
    connect(m_writeNotifier, &QSocketNotifier::activated, this, &SshSession::service);
    m_tick = new QTimer(this);
    m_tick->setInterval(kTickMs);
    connect(m_tick, &QTimer::timeout, this, &SshSession::service);
    m_tick->start();

    m_running = true;
    qCInfo(lcNodes).noquote() << where() << ": agent started:" << m_command;
    Q_EMIT started(m_command);
    service(); // bytes that came during the exec, queued writes
}

Result<void> SshSession::connectAndLogin()
{
    m_session = ssh_new();
    if (!m_session)
        return fail(QStringLiteral("%1: cannot create an SSH session").arg(m_options.name));
    const QByteArray host = m_options.host.toUtf8();
    ssh_options_set(m_session, SSH_OPTIONS_HOST, host.constData());
    // Our default timeout before the config file, so its ConnectTimeout wins.
    const long timeout = std::max(1, m_options.connectTimeoutSec);
    ssh_options_set(m_session, SSH_OPTIONS_TIMEOUT, &timeout);
    // The config file first; the explicit settings after it win (LIBSSH-NOTES.md).
    const QByteArray config = m_options.configFile.toUtf8();
    if (ssh_options_parse_config(m_session, m_options.configFile.isEmpty() ? nullptr : config.constData()) != SSH_OK)
        return fail(
                QStringLiteral("node %1: cannot read the SSH configuration %2: %3")
                        .arg(m_options.name,
                                m_options.configFile.isEmpty() ? QStringLiteral("~/.ssh/config") : m_options.configFile,
                                QString::fromUtf8(ssh_get_error(m_session))));
    if (!m_options.user.isEmpty()) {
        const QByteArray user = m_options.user.toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_USER, user.constData());
    }
    if (m_options.port > 0) {
        const unsigned int port = unsigned(m_options.port);
        ssh_options_set(m_session, SSH_OPTIONS_PORT, &port);
    }
    // libssh's list of identities can only be read by its first entry: the
    // config's last IdentityFile, or libssh's first default (fallback of
    // identityFiles()).
    m_configIdentity = getStringOption(m_session, SSH_OPTIONS_IDENTITY);
    if (m_configIdentity == QLatin1String(kLibsshFirstDefaultIdentity))
        m_configIdentity.clear();
    if (!m_options.identityFile.isEmpty()) {
        const QByteArray id = m_options.identityFile.toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_IDENTITY, id.constData());
    }
    // The host key policy is Trainyard's (HostKeyPolicy.h, from OpenSSH's
    // StrictHostKeyChecking): libssh must report an unknown host as unknown,
    // which it does not after a config's `StrictHostKeyChecking no`.
    const int strictCheck = 1;
    ssh_options_set(m_session, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strictCheck);
    if (!m_options.knownHostsFile.isEmpty()) {
        const QByteArray kh = m_options.knownHostsFile.toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_KNOWNHOSTS, kh.constData());
    }
    const int nodelay = 1;
    ssh_options_set(m_session, SSH_OPTIONS_NODELAY, &nodelay);

    m_resolvedHost = getStringOption(m_session, SSH_OPTIONS_HOST);
    m_resolvedUser = getStringOption(m_session, SSH_OPTIONS_USER);
    unsigned int port = 0;
    if (ssh_options_get_port(m_session, &port) == SSH_OK)
        m_resolvedPort = int(port);
    Q_EMIT resolved(m_resolvedHost, m_resolvedPort, !getStringOption(m_session, SSH_OPTIONS_PROXYCOMMAND).isEmpty());

    ssh_set_blocking(m_session, 1);
    if (ssh_connect(m_session) != SSH_OK) {
        QString message
                = QStringLiteral("cannot connect to %1: %2").arg(where(), QString::fromUtf8(ssh_get_error(m_session)));
        const QString proxy = getStringOption(m_session, SSH_OPTIONS_PROXYCOMMAND);
        if (!proxy.isEmpty())
            message += QStringLiteral(" (through the ProxyCommand/ProxyJump \"%1\": its errors are not visible here, "
                                      "and the jump host is reached with OpenSSH's own configuration; try `ssh %2` "
                                      "in a terminal)")
                               .arg(proxy, m_options.host);
        return fail(message, ErrorKind::Unreachable);
    }
    if (auto v = verifyHostKey(); !v)
        return v;
    return authenticate();
}

Result<void> SshSession::verifyHostKey()
{
    ssh_key key = nullptr;
    if (ssh_get_server_publickey(m_session, &key) != SSH_OK || !key)
        return fail(QStringLiteral("%1: the server sent no host key: %2")
                            .arg(where(), QString::fromUtf8(ssh_get_error(m_session))));
    unsigned char* hash = nullptr;
    size_t hashLen = 0;
    QString fingerprint;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hashLen) == SSH_OK) {
        char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hashLen);
        if (fp) {
            fingerprint = QString::fromUtf8(fp);
            ssh_string_free_char(fp);
        }
        ssh_clean_pubkey_hash(&hash);
    }
    const char* typeName = ssh_key_type_to_char(ssh_key_type(key));
    const QString keyType = typeName ? QString::fromLatin1(typeName) : QStringLiteral("unknown");

    // HostKeyAlias (libssh 0.10 ignores it): ssh looks the key up and
    // records it under the alias as it is, whatever the port (OpenSSH's
    // sshconnect.c, get_hostfile_hostname_ipaddr), so that is the name here.
    const OpenSshHostConfig* openssh = openSshConfig();
    m_hostKeyAlias = openssh ? openssh->hostKeyAlias : QString();
    // StrictHostKeyChecking as OpenSSH resolves it (libssh reads only yes/no
    // and then calls an unknown host OK); without ssh, OpenSSH's default.
    const StrictHostKeyChecking strict
            = parseStrictHostKeyChecking(openssh ? openssh->strictHostKeyChecking : QString());
    const QString file = getStringOption(m_session, SSH_OPTIONS_KNOWNHOSTS);
    const QString name = m_hostKeyAlias.isEmpty() ? knownHostsName(m_resolvedHost, m_resolvedPort) : m_hostKeyAlias;
    const ssh_known_hosts_e libsshState = m_hostKeyAlias.isEmpty()
            ? ssh_session_is_known_server(m_session)
            : knownHostsStateUnder(name.toUtf8(), key, file, getStringOption(m_session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS));
    ssh_key_free(key);
    auto linesOf = [&] {
        QStringList refs;
        for (int line : knownHostsLines(file, name))
            refs << QStringLiteral("%1:%2").arg(file).arg(line);
        return refs.isEmpty() ? file : refs.join(QStringLiteral(", "));
    };
    HostKeyState state = HostKeyState::Unknown;
    switch (libsshState) {
    case SSH_KNOWN_HOSTS_OK: state = HostKeyState::Known; break;
    case SSH_KNOWN_HOSTS_CHANGED: state = HostKeyState::Changed; break;
    case SSH_KNOWN_HOSTS_OTHER: state = HostKeyState::OtherType; break;
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND: // a missing known_hosts file: the same as an unknown host
        state = HostKeyState::Unknown;
        break;
    case SSH_KNOWN_HOSTS_ERROR:
    default:
        return fail(QStringLiteral("%1: cannot check the host key against %2: %3")
                            .arg(where(), file, QString::fromUtf8(ssh_get_error(m_session))));
    }
    const HostKeyDecision decision = decideHostKey(state, strict, m_options.acceptNewHostKey);
    const QString strictName = strictHostKeyCheckingName(strict);
    // OpenSSH's headline, so that the warning reads the same as ssh's.
    const QString changed = QStringLiteral(
            "WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! The host key of %1 has CHANGED. The server now "
            "offers the %2 key %3, which does not match the key stored for %4 in %5. Someone could be "
            "intercepting the connection (man-in-the-middle), or the host key was replaced.")
                                    .arg(where(), keyType, fingerprint, name, linesOf());
    switch (decision) {
    case HostKeyDecision::Accepted: Q_EMIT hostKeyDecided(decision, fingerprint, QString()); return {};
    case HostKeyDecision::AcceptedChanged: {
        const QString message = changed
                + QStringLiteral(
                        " Connected anyway because StrictHostKeyChecking is no for this host, as ssh does; known_hosts "
                        "is left as it is (only public-key login is used, nothing is forwarded). If you know the "
                        "key was replaced, remove that entry (ssh-keygen -R '%1' -f %2) so the new key is recorded.")
                          .arg(name, file);
        m_hostKeyChangedAccepted = true; // and so no keyboard-interactive login (authenticate())
        qCWarning(lcNodes).noquote() << message;
        Q_EMIT hostKeyDecided(decision, fingerprint, message);
        return {};
    }
    case HostKeyDecision::RefusedChanged: {
        const QString message = QStringLiteral("REFUSED (StrictHostKeyChecking %1): ").arg(strictName) + changed
                + QStringLiteral(
                        " If you know it was replaced, remove that entry (ssh-keygen -R '%1' -f %2) and connect again.")
                          .arg(name, file);
        Q_EMIT hostKeyDecided(decision, fingerprint, message);
        Q_EMIT hostKeyRejected(fingerprint, message);
        return fail(message, ErrorKind::HostKeyChanged);
    }
    case HostKeyDecision::RefusedOtherType: {
        const QString message = QStringLiteral(
                "REFUSED: %1 offers a %2 host key (%3), but %4 holds a key of another type for %5 (%6). "
                "This can mean the connection is being intercepted. If the host's keys were replaced, "
                "remove that entry (ssh-keygen -R '%5' -f %4) and connect again.")
                                        .arg(where(), keyType, fingerprint, file, name, linesOf());
        Q_EMIT hostKeyDecided(decision, fingerprint, message);
        Q_EMIT hostKeyRejected(fingerprint, message);
        return fail(message, ErrorKind::HostKeyChanged);
    }
    case HostKeyDecision::RefusedUnknown: {
        const QString message
                = QStringLiteral(
                        "the host key of %1 is not known (not in %2%6). Its %3 key fingerprint is %4. Check it "
                        "(on the host: ssh-keygen -lf /etc/ssh/ssh_host_%5_key.pub) and accept it "
                        "(trainyardctl node trust NAME for a stored node, node add ... --accept-new-host-key "
                        "for a new one, or the dialog in the Nodes view).")
                          .arg(where(), file.isEmpty() ? QStringLiteral("~/.ssh/known_hosts") : file, keyType,
                                  fingerprint,
                                  keyType.startsWith(QLatin1String("ssh-")) ? keyType.mid(4) : keyType.toLower(),
                                  m_hostKeyAlias.isEmpty()
                                          ? QString()
                                          : QStringLiteral(" under its HostKeyAlias %1").arg(m_hostKeyAlias));
        Q_EMIT hostKeyDecided(decision, fingerprint, message);
        Q_EMIT hostKeyRejected(fingerprint, message);
        return fail(message, ErrorKind::HostKeyUnknown);
    }
    case HostKeyDecision::Added:
    case HostKeyDecision::None: break;
    }
    if (auto added = addHostKey(file); !added)
        return added;
    qCInfo(lcNodes).noquote() << where() << ": added" << keyType << fingerprint << "to" << file
                              << (m_options.acceptNewHostKey
                                                 ? QString()
                                                 : QStringLiteral("(StrictHostKeyChecking %1)").arg(strictName));
    Q_EMIT hostKeyDecided(HostKeyDecision::Added, fingerprint, QString());
    return {};
}

const OpenSshHostConfig* SshSession::openSshConfig()
{
    if (!m_openSshQueried) {
        m_openSshQueried = true;
        m_openSsh = resolveOpenSshConfig(
                {m_options.host, m_options.configFile, m_options.user, m_options.port, m_options.identityFile},
                &m_openSshProblem);
    }
    return m_openSsh ? &*m_openSsh : nullptr;
}

Result<void> SshSession::addHostKey(const QString& file)
{
    // libssh 0.10 does not read HashKnownHosts and always writes the plain
    // name; OpenSSH's client says what it would do for this host. Without it
    // (not installed, or it rejects the configuration) the entry stays plain:
    // libssh's own behaviour, and with no ssh client there is usually no
    // /etc/ssh/ssh_config (Debian ships it in openssh-client) asking for more.
    const OpenSshHostConfig* openssh = openSshConfig();
    if (!openssh)
        qCInfo(lcNodes).noquote() << QStringLiteral("%1: HashKnownHosts unknown (%2): the host key is added unhashed")
                                             .arg(where(), m_openSshProblem);
    const bool hashed = openssh && openssh->hashKnownHosts;
    if (!hashed && m_hostKeyAlias.isEmpty()) {
        if (ssh_session_update_known_hosts(m_session) != SSH_OK)
            return fail(QStringLiteral("%1: cannot add the host key to %2: %3")
                                .arg(where(), file, QString::fromUtf8(ssh_get_error(m_session))));
        return {};
    }
    // libssh's own entry ("name keytype base64key") under the name it is
    // looked up by: libssh's (`[host]:port` off port 22) or the HostKeyAlias
    // as it is (verifyHostKey()); hashed when HashKnownHosts says so.
    char* entry = nullptr;
    if (ssh_session_export_known_hosts_entry(m_session, &entry) != SSH_OK || !entry)
        return fail(QStringLiteral("%1: cannot add the host key to %2: %3")
                            .arg(where(), file, QString::fromUtf8(ssh_get_error(m_session))));
    const QByteArray plain = QByteArray(entry).trimmed();
    ssh_string_free_char(entry);
    const qsizetype space = plain.indexOf(' ');
    if (space <= 0)
        return fail(QStringLiteral("%1: cannot add the host key to %2: libssh gave no entry").arg(where(), file));
    const QByteArray name = m_hostKeyAlias.isEmpty() ? plain.left(space) : m_hostKeyAlias.toUtf8();
    if (auto r = appendKnownHostsLine(file, (hashed ? hashedKnownHostsName(name) : name) + plain.mid(space)); !r)
        return fail(QStringLiteral("%1: cannot add the host key to %2: %3").arg(where(), file, r.error().message));
    return {};
}

QStringList SshSession::identityFiles()
{
    if (const OpenSshHostConfig* openssh = openSshConfig()) {
        QStringList files = openssh->identityFiles; // the node's (-i) first
        // OpenSSH drops an -i file that does not exist; kept here, the
        // failure then names it.
        if (!m_options.identityFile.isEmpty() && !QFileInfo::exists(m_options.identityFile))
            files.prepend(m_options.identityFile);
        return files;
    }
    // No OpenSSH client (or it rejects the configuration): what libssh's
    // public API shows. It returns only the first entry of its identity list,
    // so of several IdentityFile lines only the last one is known here.
    const QString home = passwdHomeDirectory();
    auto expand = [&home](QString file) {
        file.replace(QStringLiteral("%d"), home + QStringLiteral("/.ssh")); // libssh's %d is the ssh directory
        if (file.startsWith(QStringLiteral("~/")))
            file = home + file.mid(1);
        return file;
    };
    QStringList files;
    for (const QString& f : {m_options.identityFile, m_configIdentity})
        if (!f.isEmpty())
            files << expand(f);
    if (files.isEmpty())
        for (const char* name : kLibsshDefaultIdentities)
            files << expand(QStringLiteral("%d/") + QLatin1String(name));
    files.removeDuplicates();
    if (!m_openSshProblem.isEmpty())
        qCInfo(lcNodes).noquote() << QStringLiteral("%1: key files from libssh's configuration (%2): %3")
                                             .arg(where(), m_openSshProblem, files.join(QStringLiteral(", ")));
    return files;
}

Result<void> SshSession::authenticate()
{
    int rc = ssh_userauth_none(m_session, nullptr);
    if (rc == SSH_AUTH_SUCCESS)
        return {};
    if (rc == SSH_AUTH_ERROR)
        return fail(QStringLiteral("%1: authentication failed: %2")
                            .arg(where(), QString::fromUtf8(ssh_get_error(m_session))),
                ErrorKind::Authentication);
    // OpenSSH's order: ssh-agent first, then the identity files. Not
    // ssh_userauth_publickey_auto: it tries the same, but its passphrase
    // callback (ssh_auth_callback: prompt, buffer, echo, verify, userdata)
    // gets "Passphrase" and nothing saying which file it reads, and its list
    // of files cannot be read through the public API. So the files go one by
    // one through the calls it makes itself.
    //
    // IdentitiesOnly (libssh 0.10 ignores it): libssh would offer every key
    // of the agent, and a server's MaxAuthTries can run out before the
    // configured key comes. So libssh gets the agent through a relay that
    // lists only the keys of the identity files (SshAgentFilter.h), alive
    // while libssh uses the agent.
    const OpenSshHostConfig* openssh = openSshConfig();
    const bool identitiesOnly = openssh && openssh->identitiesOnly;
    QString agentTried = QStringLiteral("ssh-agent"); // how a failure names the agent's part; empty: not asked
    QString agentSkipped;                             // why not, for a failure
    bool useAgent = true;
    std::unique_ptr<SshAgentFilter> agentFilter;
    if (identitiesOnly) {
        QList<QByteArray> allowed;
        for (const QString& file : identityFiles()) {
            if (const auto blob = publicKeyBlob(file))
                allowed << *blob;
            if (const auto cert
                    = certificateBlob(file + QStringLiteral("-cert.pub"))) // OpenSSH loads it beside the key
                allowed << *cert;
        }
        for (const QString& file : openssh->certificateFiles)
            if (const auto cert = certificateBlob(file))
                allowed << *cert;
        const QString socket = openssh->agentSocket();
        if (socket.isEmpty()) {
            agentSkipped = QStringLiteral("no ssh-agent (IdentityAgent none, or SSH_AUTH_SOCK not set)");
        } else if (allowed.isEmpty()) {
            agentSkipped = QStringLiteral("IdentitiesOnly, and no identity file has a public key that can be read");
        } else if (auto filter = SshAgentFilter::start(socket, std::move(allowed)); !filter) {
            agentSkipped = filter.error().message;
        } else if (const int fd = (*filter)->takeClientFd(); ssh_set_agent_socket(m_session, fd) != SSH_OK) {
            ::close(fd); // not taken by libssh
            agentSkipped
                    = QStringLiteral("libssh refused the relay: %1").arg(QString::fromUtf8(ssh_get_error(m_session)));
        } else {
            agentFilter = std::move(*filter);
        }
        useAgent = agentFilter != nullptr;
        if (!useAgent) {
            // Never libssh's own connection to the agent: it would offer every key.
            agentTried.clear();
            qCInfo(lcNodes).noquote() << where() << ": ssh-agent not asked:" << agentSkipped;
        }
    }
    rc = useAgent ? ssh_userauth_agent(m_session, nullptr) : SSH_AUTH_DENIED;
    if (agentFilter) {
        if (agentFilter->listed() >= 0)
            agentTried = QStringLiteral("ssh-agent (IdentitiesOnly: %1 of its %2 key(s))")
                                 .arg(agentFilter->kept())
                                 .arg(agentFilter->listed());
        agentFilter.reset(); // libssh is done with the agent; its end of the pair now reads end-of-file
    }
    if (rc == SSH_AUTH_SUCCESS)
        return {};
    auto disconnected = [this] {
        return !ssh_is_connected(m_session) || (ssh_get_status(m_session) & (SSH_CLOSED | SSH_CLOSED_ERROR));
    };
    // The server ends the connection after so many refused keys (sshd's
    // MaxAuthTries): the keys after that were never offered, not refused.
    // libssh 0.10 then waits out its timeout and returns SSH_AUTH_AGAIN (or
    // SSH_AUTH_ERROR): the connection's state tells.
    bool dropped = disconnected();
    QString dropError = dropped ? QString::fromUtf8(ssh_get_error(m_session)) : QString();
    if (rc != SSH_AUTH_PARTIAL)
        rc = SSH_AUTH_DENIED; // an agent that is not running or fails is passed over, as there
    QStringList tried, missing, encrypted, unreadable;
    QStringList locked;     // accepted by the server, encrypted, not unlocked
    QStringList notOffered; // the connection had ended
    int asked = 0;
    const QStringList files = rc == SSH_AUTH_PARTIAL ? QStringList() : identityFiles();
    for (const QString& file : files) {
        if (!QFileInfo(file).isFile()) {
            missing << file;
            continue;
        }
        if (dropped) {
            notOffered << file;
            continue;
        }
        tried << file;
        KeyRead read{m_passphrases.get(), m_options.name.isEmpty() ? m_options.host : m_options.name, file};
        // The private key is read here only for a PEM key without its .pub,
        // which may ask for the passphrase before the server has seen the key.
        ssh_key pub = nullptr;
        ssh_key priv = nullptr;
        if (!readPublicKey(read, &pub, &priv)) {
            (read.encrypted ? encrypted : unreadable) << file;
            continue;
        }
        rc = ssh_userauth_try_publickey(m_session, nullptr, pub);
        ssh_key_free(pub);
        if (rc != SSH_AUTH_SUCCESS) { // refused: the next file; an error: stop
            ssh_key_free(priv);
            if (disconnected()) { // this one was offered (and counted): the rest are not
                dropped = true;
                dropError = QString::fromUtf8(ssh_get_error(m_session));
                continue;
            }
            if (rc == SSH_AUTH_ERROR)
                break;
            continue;
        }
        if (!priv)
            priv = readPrivateKey(read);
        asked += read.asked;
        if (!priv) {
            if (read.encrypted)
                locked << file;
            (read.encrypted ? encrypted : unreadable) << file;
            rc = SSH_AUTH_DENIED;
            continue;
        }
        rc = ssh_userauth_publickey(m_session, nullptr, priv);
        ssh_key_free(priv);
        if (rc == SSH_AUTH_SUCCESS)
            return {};
        if (rc == SSH_AUTH_ERROR || rc == SSH_AUTH_PARTIAL)
            break;
    }
    QString keys = agentTried;
    const QString then = keys.isEmpty() ? QString() : QStringLiteral(", then ");
    if (!tried.isEmpty())
        keys += then + tried.join(QStringLiteral(", "));
    else if (!missing.isEmpty() && notOffered.isEmpty())
        keys += then + QStringLiteral("no key file: none of %1 exists").arg(missing.join(QStringLiteral(", ")));
    if (keys.isEmpty())
        keys = QStringLiteral("none");
    // Keyboard-interactive (RFC 4256) after the keys, as OpenSSH's default
    // PreferredAuthentications: a second factor once a key was accepted
    // (PARTIAL: the server's AuthenticationMethods publickey,keyboard-interactive),
    // or the login itself when no key was (a PAM password and code).
    QString kbdintNote; // keyboard-interactive's part of the failure below
    if (!dropped && (rc == SSH_AUTH_PARTIAL || rc == SSH_AUTH_DENIED)
            && (ssh_userauth_list(m_session, nullptr) & SSH_AUTH_METHOD_INTERACTIVE)) {
        const bool afterKey = rc == SSH_AUTH_PARTIAL;
        if (m_hostKeyChangedAccepted) {
            // As OpenSSH: answers (a password, a code) never go to a host
            // whose key changed; only the key's signature, bound to this
            // session, is given.
            const QString disabled
                    = QStringLiteral("keyboard-interactive authentication, which the server %1, is disabled to avoid "
                                     "man-in-the-middle attacks: the host key changed and was accepted only because "
                                     "StrictHostKeyChecking is no for this host")
                              .arg(afterKey ? QStringLiteral("wants after the key") : QStringLiteral("offers"));
            if (afterKey)
                return fail(QStringLiteral("%1: authentication failed: the server accepted the key (%2), but %3")
                                    .arg(where(), keys, disabled),
                        ErrorKind::Authentication);
            kbdintNote = QStringLiteral("; ") + disabled;
        } else if (!m_passphrases) {
            // Never started without someone to answer: starting it can already
            // send a push to the user's phone (Duo's autopush).
            if (afterKey)
                return fail(QStringLiteral("%1: the login asks for more than a key: after accepting it (%2) the "
                                           "server asks questions interactively (keyboard-interactive: a one-time "
                                           "code, a Duo prompt), and there is no one to answer them here (batch "
                                           "mode): run trainyardctl in a terminal or use the GUI")
                                    .arg(where(), keys),
                        ErrorKind::Authentication);
            kbdintNote = QStringLiteral(
                    "; the server also offers keyboard-interactive login (a password or a one-time code), "
                    "which needs someone to answer (batch mode here): run trainyardctl in a terminal or use the GUI");
        } else {
            const KbdintOutcome k = keyboardInteractive();
            if (k.rc == SSH_AUTH_SUCCESS)
                return {};
            if (afterKey)
                return fail(QStringLiteral("%1: authentication failed: the server accepted the key (%2), then %3")
                                    .arg(where(), keys, k.problem),
                        ErrorKind::Authentication);
            kbdintNote = QStringLiteral("; then ") + k.problem;
        }
    }
    if (dropped) {
        // Not "refused": the server never saw these keys.
        QString message
                = QStringLiteral(
                        "%1: authentication failed: the server closed the connection (%2) after refusing the keys "
                        "offered (%3)")
                          .arg(where(), dropError.isEmpty() ? QStringLiteral("no reason given") : dropError, keys);
        if (!notOffered.isEmpty())
            message += QStringLiteral(", before the key file %1 could be offered")
                               .arg(notOffered.join(QStringLiteral(", ")));
        message += QStringLiteral(
                ". A server takes only so many keys per connection (sshd's MaxAuthTries, 6 by default)");
        if (!identitiesOnly)
            message += QStringLiteral(
                    ", and ssh-agent's keys come first: set `IdentitiesOnly yes` for this host in the SSH "
                    "configuration so that only its IdentityFile keys are offered, or remove keys from the "
                    "agent (ssh-add -d)");
        return fail(message, ErrorKind::Authentication);
    }
    // A key the server accepts but that stayed locked is the whole story.
    QString message = rc == SSH_AUTH_PARTIAL
            ? QStringLiteral("%1: authentication failed: the server accepted the key (%2), but also wants another "
                             "authentication method (%3), which Trainyard does not support (it supports "
                             "keyboard-interactive after a key)")
                      .arg(where(), keys, authMethodNames(ssh_userauth_list(m_session, nullptr)))
            : locked.isEmpty()
            ? QStringLiteral("%1: authentication failed: the server accepted none of the keys tried (%2)")
                      .arg(where(), keys)
            : QStringLiteral(
                    "%1: authentication failed: the server accepts the key %2, but it could not be unlocked (tried: %3)")
                      .arg(where(), locked.join(QStringLiteral(", ")), keys);
    if (!agentSkipped.isEmpty())
        message += QStringLiteral("; ssh-agent was not asked: %1").arg(agentSkipped);
    if (!m_options.identityFile.isEmpty() && missing.contains(m_options.identityFile))
        message += QStringLiteral("; the node's identity file %1 does not exist").arg(m_options.identityFile);
    if (rc == SSH_AUTH_ERROR)
        message += QStringLiteral(": ") + QString::fromUtf8(ssh_get_error(m_session));
    message += kbdintNote;
    if (!unreadable.isEmpty())
        message += QStringLiteral("; cannot read the private key %1").arg(unreadable.join(QStringLiteral(", ")));
    if (!encrypted.isEmpty()) {
        const QString keys = QStringLiteral("the encrypted private key %1").arg(encrypted.join(QStringLiteral(", ")));
        if (!m_passphrases)
            message += QStringLiteral(
                    ". It needs %1, which cannot be used without a passphrase prompt (batch mode): "
                    "load it into ssh-agent (ssh-add), connect interactively, or set TRAINYARD_ASKPASS "
                    "(trainyardctl)")
                               .arg(keys);
        else
            message += QStringLiteral(". A passphrase was asked for (%1, %2 time(s)) and not given or not correct")
                               .arg(keys)
                               .arg(asked);
    }
    return fail(message, ErrorKind::Authentication);
}

SshSession::KbdintOutcome SshSession::keyboardInteractive()
{
    const QString node = m_options.name.isEmpty() ? m_options.host : m_options.name;
    const auto connected = [this] {
        return ssh_is_connected(m_session) && !(ssh_get_status(m_session) & (SSH_CLOSED | SSH_CLOSED_ERROR));
    };
    // Blocking calls: past the session's timeout libssh returns
    // SSH_AUTH_AGAIN, and the same call goes on waiting where it was.
    const auto call = [&] {
        QElapsedTimer waited;
        waited.start();
        int rc = ssh_userauth_kbdint(m_session, nullptr, nullptr);
        while (rc == SSH_AUTH_AGAIN && waited.elapsed() < kKbdintReplyMs && connected())
            rc = ssh_userauth_kbdint(m_session, nullptr, nullptr);
        return rc;
    };
    QStringList asked; // the prompts' texts, for a failure (never the answers)
    const auto quoted = [&asked] {
        QStringList q;
        for (const QString& t : std::as_const(asked))
            q << u'"' + t.trimmed() + u'"';
        return q.join(QStringLiteral(", "));
    };
    int rounds = 0;
    int questionRounds = 0;
    int rc = call();
    while (rc == SSH_AUTH_INFO) {
        if (++rounds > kMaxKbdintRounds)
            return {SSH_AUTH_DENIED,
                    QStringLiteral("the server kept sending keyboard-interactive rounds (more than %1); gave up")
                            .arg(kMaxKbdintRounds)};
        SshLoginQuestions questions;
        questions.name = QString::fromUtf8(ssh_userauth_kbdint_getname(m_session));
        questions.instruction = QString::fromUtf8(ssh_userauth_kbdint_getinstruction(m_session));
        const int n = std::max(0, ssh_userauth_kbdint_getnprompts(m_session));
        for (int i = 0; i < n; ++i) {
            char echo = 0;
            const char* text = ssh_userauth_kbdint_getprompt(m_session, unsigned(i), &echo);
            questions.prompts.append({QString::fromUtf8(text ? text : ""), echo != 0});
        }
        if (n == 0) {
            // A round without questions (OpenSSH's PAM sends one to pass on
            // its messages): answered with nothing, nobody is asked.
            if (!questions.name.isEmpty() || !questions.instruction.isEmpty())
                qCInfo(lcNodes).noquote()
                        << where()
                        << ": the login says:" << QString(questions.name + u' ' + questions.instruction).trimmed();
            rc = call();
            continue;
        }
        for (const SshLoginPrompt& p : std::as_const(questions.prompts))
            asked << p.text;
        if (++questionRounds > kMaxKbdintQuestionRounds)
            return {SSH_AUTH_DENIED,
                    QStringLiteral("the server kept asking questions (%1; more than %2 rounds); gave up")
                            .arg(quoted())
                            .arg(kMaxKbdintQuestionRounds)};
        std::optional<QList<QByteArray>> answers = m_passphrases->answers(node, questions);
        const auto wipe = [&answers] {
            if (answers)
                for (QByteArray& a : *answers)
                    a.fill('\0');
            answers.reset();
        };
        if (!answers || answers->size() != n) {
            wipe();
            return {SSH_AUTH_DENIED,
                    QStringLiteral("the server asked questions interactively (keyboard-interactive: %1), and they "
                                   "were not answered (cancelled, or nobody to ask: run trainyardctl in a terminal "
                                   "or use the GUI)")
                            .arg(quoted())};
        }
        for (int i = 0; i < n; ++i) {
            QByteArray& a = (*answers)[i];
            // A C string for libssh, which copies it (and wipes its copy once sent).
            if (a.contains('\0') || ssh_userauth_kbdint_setanswer(m_session, unsigned(i), a.constData()) < 0) {
                wipe();
                return {SSH_AUTH_ERROR,
                        QStringLiteral("an answer to the keyboard-interactive questions (%1) could not be sent%2")
                                .arg(quoted(),
                                        connected()
                                                ? QString()
                                                : QStringLiteral(": ") + QString::fromUtf8(ssh_get_error(m_session)))};
            }
        }
        wipe();
        qCInfo(lcNodes).noquote() << where() << ": answered" << n << "keyboard-interactive question(s)";
        rc = call();
    }
    switch (rc) {
    case SSH_AUTH_SUCCESS: return {rc, {}};
    case SSH_AUTH_PARTIAL:
        return {rc,
                QStringLiteral("the server accepted the keyboard-interactive answers (%1) but also wants another "
                               "authentication method (%2), which Trainyard does not support")
                        .arg(asked.isEmpty() ? QStringLiteral("no questions") : quoted(),
                                authMethodNames(ssh_userauth_list(m_session, nullptr)))};
    case SSH_AUTH_DENIED:
        if (asked.isEmpty())
            return {rc, QStringLiteral("the server refused keyboard-interactive login without asking anything")};
        return {rc,
                QStringLiteral("the server refused the answers to its keyboard-interactive questions (%1). They are "
                               "not asked again in this login: connect again to answer anew (a new one-time code)")
                        .arg(quoted())};
    case SSH_AUTH_AGAIN:
        return {rc,
                QStringLiteral("the server did not answer the keyboard-interactive login within %1 s%2")
                        .arg(kKbdintReplyMs / 1000)
                        .arg(asked.isEmpty() ? QString() : QStringLiteral(" (questions: %1)").arg(quoted()))};
    default:
        return {SSH_AUTH_ERROR,
                QStringLiteral("keyboard-interactive login failed: %1")
                        .arg(QString::fromUtf8(ssh_get_error(m_session)))};
    }
}

Result<void> SshSession::openAgentChannel()
{
    m_channel = ssh_channel_new(m_session);
    if (!m_channel)
        return fail(QStringLiteral("%1: cannot create a channel: %2")
                            .arg(where(), QString::fromUtf8(ssh_get_error(m_session))));
    if (ssh_channel_open_session(m_channel) != SSH_OK)
        return fail(QStringLiteral("%1: cannot open a session channel: %2")
                            .arg(where(), QString::fromUtf8(ssh_get_error(m_session))));
    // Registered before the exec and kept until the channel is freed, so no
    // data, EOF, exit status or close is missed.
    m_channelCallbacks = std::make_unique<ssh_channel_callbacks_struct>();
    std::memset(m_channelCallbacks.get(), 0, sizeof(ssh_channel_callbacks_struct));
    ssh_callbacks_init(m_channelCallbacks.get());
    m_channelCallbacks->userdata = this;
    m_channelCallbacks->channel_data_function = &SshSession::onChannelData;
    m_channelCallbacks->channel_eof_function = &SshSession::onChannelEof;
    m_channelCallbacks->channel_close_function = &SshSession::onChannelClose;
    m_channelCallbacks->channel_exit_status_function = &SshSession::onExitStatus;
    m_channelCallbacks->channel_exit_signal_function = &SshSession::onExitSignal;
    ssh_set_channel_callbacks(m_channel, m_channelCallbacks.get());
    const QByteArray cmd = m_command.toUtf8();
    if (ssh_channel_request_exec(m_channel, cmd.constData()) != SSH_OK)
        return fail(QStringLiteral("%1: cannot run the agent (%2): %3")
                            .arg(where(), m_command, QString::fromUtf8(ssh_get_error(m_session))));
    return {};
}

void SshSession::write(const QByteArray& bytes)
{
    if (m_finished)
        return;
    m_out.append(bytes);
    if (m_running)
        service();
}

void SshSession::post(const QByteArray& bytes)
{
    {
        QMutexLocker lock(&m_postedMutex);
        m_posted.append(bytes);
    }
    QMetaObject::invokeMethod(
            this,
            [this] {
                drainPosted();
                if (m_running)
                    service();
            },
            Qt::QueuedConnection);
}

void SshSession::drainPosted()
{
    QMutexLocker lock(&m_postedMutex);
    if (m_posted.isEmpty())
        return;
    if (!m_finished)
        m_out.append(m_posted);
    m_posted.clear();
}

void SshSession::pumpDuringFileJob()
{
    if (!m_event || !m_session || m_channelClosed)
        return;
    drainPosted();
    ssh_set_blocking(m_session, 0);
    ssh_event_dopoll(m_event, 0);
    flushWrites();
    emitReceived();
    logStderr(false);
    ssh_set_blocking(m_session, 1);
}

Result<void> SshSession::runFileJob(const NodeFileJob& job)
{
    if (!m_running || m_finished || !m_session)
        return fail(QStringLiteral("%1: not connected").arg(where()));
    if (m_inFileJob)
        return fail(QStringLiteral("%1: another file transfer is running on this connection").arg(where()));
    m_inFileJob = true;
    ssh_set_blocking(m_session, 1);
    Result<void> result;
    if (!m_sftp) {
        m_sftp = sftp_new(m_session);
        if (!m_sftp || sftp_init(m_sftp) != SSH_OK) {
            result = fail(QStringLiteral("%1: cannot start SFTP (is the sftp subsystem enabled in sshd_config?): %2")
                                  .arg(where(), QString::fromUtf8(ssh_get_error(m_session))));
            if (m_sftp)
                sftp_free(m_sftp);
            m_sftp = nullptr;
        }
    }
    if (m_sftp) {
        SftpNodeFiles files(m_session, m_sftp, m_options.name.isEmpty() ? m_options.host : m_options.name,
                [this] { pumpDuringFileJob(); });
        result = job(files);
    }
    ssh_set_blocking(m_session, 0);
    m_inFileJob = false;
    QMetaObject::invokeMethod(this, &SshSession::service, Qt::QueuedConnection);
    return result;
}

void SshSession::flushWrites()
{
    while (!m_out.isEmpty() && m_channel) {
        const uint32_t len = uint32_t(std::min<qsizetype>(m_out.size(), 256 * 1024));
        const int n = ssh_channel_write(m_channel, m_out.constData(), len);
        if (n == SSH_ERROR) {
            qCWarning(lcNodes).noquote() << where() << ": write to the agent failed:" << ssh_get_error(m_session);
            break; // the checks in service() end the connection
        }
        if (n <= 0)
            break; // remote window full: wait for its adjust
        m_out.remove(0, n);
    }
}

void SshSession::updateWriteNotifier()
{
    if (!m_writeNotifier || !m_session)
        return;
    m_writeNotifier->setEnabled((ssh_get_poll_flags(m_session) & SSH_WRITE_PENDING) != 0);
}

void SshSession::service()
{
    if (m_inService || m_finished || !m_event || !m_running || m_inFileJob)
        return;
    drainPosted();
    m_inService = true;
    // libssh reads the socket 4 KiB per recv(), one recv per dopoll: going
    // back to the event loop after each would cost an event-loop turn per
    // 4 KiB. Poll on while a round handles something, up to kMaxPollRounds.
    int rc = ssh_event_dopoll(m_event, 0);
    for (int round = 1; rc == SSH_OK && round < kMaxPollRounds && !m_channelClosed; ++round)
        rc = ssh_event_dopoll(m_event, 0);
    if (!m_channelClosed)
        flushWrites();
    emitReceived();
    logStderr(false);
    m_inService = false;

    const int status = ssh_get_status(m_session);
    if (rc == SSH_ERROR || (status & (SSH_CLOSED | SSH_CLOSED_ERROR)) || !ssh_is_connected(m_session)) {
        QString why = QString::fromUtf8(ssh_get_error(m_session));
        finish(QStringLiteral("SSH connection to %1 lost%2")
                        .arg(where(), why.isEmpty() ? QString() : QStringLiteral(": ") + why),
                ErrorKind::Unreachable);
        return;
    }
    if (m_channelClosed || ssh_channel_is_closed(m_channel)) {
        QString how;
        if (!m_exitSignal.isEmpty())
            how = QStringLiteral("was killed by SIG%1").arg(m_exitSignal);
        else if (m_exitStatus)
            how = QStringLiteral("exited with status %1").arg(*m_exitStatus);
        else
            how = QStringLiteral("closed its channel");
        QString message = QStringLiteral("the agent on %1 %2").arg(where(), how);
        if (m_exitStatus && *m_exitStatus == 127)
            message += QStringLiteral(" (command not found: %1)").arg(m_command);
        finish(message);
        return;
    }
    updateWriteNotifier();
}

void SshSession::stop(const QString& reason)
{
    if (m_finished)
        return;
    finish(reason);
}

void SshSession::finish(const QString& reason, ErrorKind kind)
{
    if (m_finished)
        return;
    m_finished = true;
    const bool graceful = m_running && !m_channelClosed;
    m_running = false;
    emitReceived(); // what arrived before the end, before finished()
    logStderr(true);
    freeAll(graceful);
    qCInfo(lcNodes).noquote() << m_options.name << ":" << reason;
    Q_EMIT finished(reason, kind);
}

void SshSession::freeAll(bool graceful)
{
    delete m_readNotifier;
    m_readNotifier = nullptr;
    delete m_writeNotifier;
    m_writeNotifier = nullptr;
    delete m_tick;
    m_tick = nullptr;
    if (m_event) {
        if (m_session)
            ssh_event_remove_session(m_event, m_session);
        ssh_event_free(m_event);
        m_event = nullptr;
    }
    const bool alive = m_session && ssh_is_connected(m_session)
            && !(ssh_get_status(m_session) & (SSH_CLOSED | SSH_CLOSED_ERROR));
    if (m_sftp) {
        if (alive)
            ssh_set_blocking(m_session, 1);
        sftp_free(m_sftp);
        m_sftp = nullptr;
    }
    if (m_channel) {
        if (graceful && alive && ssh_channel_is_open(m_channel)) {
            // EOF on the agent's stdin: it exits, its runs go on.
            ssh_set_blocking(m_session, 1);
            if (!m_out.isEmpty())
                ssh_channel_write(m_channel, m_out.constData(), uint32_t(m_out.size()));
            ssh_channel_send_eof(m_channel);
            ssh_channel_close(m_channel);
        }
        ssh_remove_channel_callbacks(m_channel, m_channelCallbacks.get());
        ssh_channel_free(m_channel);
        m_channel = nullptr;
    }
    if (m_session) {
        if (alive)
            ssh_disconnect(m_session);
        ssh_free(m_session);
        m_session = nullptr;
    }
    m_channelCallbacks.reset();
    m_out.clear();
}

void SshSession::logStderr(bool flushAll)
{
    for (;;) {
        const qsizetype nl = m_stderrBuf.indexOf('\n');
        if (nl < 0)
            break;
        qCWarning(lcNodes).noquote() << "agent on" << m_options.name << ":" << QString::fromUtf8(m_stderrBuf.left(nl));
        m_stderrBuf.remove(0, nl + 1);
    }
    if (flushAll && !m_stderrBuf.isEmpty()) {
        qCWarning(lcNodes).noquote() << "agent on" << m_options.name << ":" << QString::fromUtf8(m_stderrBuf);
        m_stderrBuf.clear();
    }
}

int SshSession::onChannelData(
        ssh_session_struct*, ssh_channel_struct*, void* data, uint32_t len, int isStderr, void* userdata)
{
    auto* self = static_cast<SshSession*>(userdata);
    if (isStderr) {
        self->m_stderrBuf.append(static_cast<const char*>(data), qsizetype(len));
        if (self->m_stderrBuf.size() > 64 * 1024)
            self->logStderr(true);
    } else {
        if (self->m_received.size() + qsizetype(len) > kReceivedBatch)
            self->emitReceived();
        if (!self->m_received.isEmpty() && self->m_received.capacity() < kReceivedBatch)
            self->m_received.reserve(kReceivedBatch); // a second packet: room for a batch (a lone reply stays small)
        self->m_received.append(static_cast<const char*>(data), qsizetype(len));
        // Inside a blocking call (a file job's SFTP request, connect, the
        // close in freeAll()) no service() end follows soon to hand the batch
        // on: it goes at once.
        if (!self->m_inService)
            self->emitReceived();
    }
    return int(len); // everything consumed: both streams are always drained
}

void SshSession::emitReceived()
{
    if (!m_received.isEmpty())
        Q_EMIT data(std::exchange(m_received, QByteArray()));
}

void SshSession::onChannelEof(ssh_session_struct*, ssh_channel_struct*, void* userdata)
{
    static_cast<SshSession*>(userdata)->m_remoteEof = true;
}

void SshSession::onChannelClose(ssh_session_struct*, ssh_channel_struct*, void* userdata)
{
    static_cast<SshSession*>(userdata)->m_channelClosed = true;
}

void SshSession::onExitStatus(ssh_session_struct*, ssh_channel_struct*, int status, void* userdata)
{
    static_cast<SshSession*>(userdata)->m_exitStatus = status;
}

void SshSession::onExitSignal(
        ssh_session_struct*, ssh_channel_struct*, const char* signal, int, const char*, const char*, void* userdata)
{
    static_cast<SshSession*>(userdata)->m_exitSignal = QString::fromUtf8(signal ? signal : "?");
}

} // namespace ty
