#pragma once

// A real OpenSSH sshd for tests (LIBSSH-NOTES.md, "A real sshd for tests"):
// a temporary directory with an ed25519 host key, a client key,
// authorized_keys and an sshd_config listening on 127.0.0.2 and 127.0.0.3
// (two "hosts" on one port), plus an ssh client config
//   Host ws1 -> 127.0.0.2, Host ws2 -> 127.0.0.3
// (port, User root, the client key, UserKnownHostsFile <dir>/known_hosts)
// to hand to libssh, so the real ~/.ssh is never read or written.
// Needs root (sshd's privilege separation) and /usr/sbin/sshd: skipReason()
// says why not when they are missing.

#include "core/nodes/SshNodeOptions.h"

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace ty::test {

// In a QtTest slot (initTestCase): skips the whole test where sshd cannot
// run here (SshdFixture::skipReason()), else starts each fixture given,
// failing the slot with start()'s error. A macro because QSKIP and QVERIFY2
// must return from the slot itself.
#define TY_START_SSHD_OR_SKIP(...)                                                                                     \
    do {                                                                                                               \
        if (const QString tySkip = ::ty::test::SshdFixture::skipReason(); !tySkip.isEmpty())                           \
            QSKIP(qPrintable(tySkip));                                                                                 \
        for (::ty::test::SshdFixture * tyFixture : {__VA_ARGS__}) {                                                    \
            QString tyError;                                                                                           \
            QVERIFY2(tyFixture->start(&tyError), qPrintable(tyError));                                                 \
        }                                                                                                              \
    } while (false)

class SshdFixture {
public:
    SshdFixture();
    ~SshdFixture();

    // Empty when sshd can run here; else why not (for QSKIP).
    static QString skipReason();

    // Lines added to sshd_config (e.g. "MaxAuthTries 3\n"); before start().
    void setExtraConfig(const QByteArray& lines) { m_extraConfig = lines; }
    // Creates the keys and configs and starts sshd. False with *error set on failure.
    bool start(QString* error);
    void stop();
    bool restart(QString* error);
    // A new host key (the old one is gone); takes effect at the next restart().
    bool regenerateHostKey(QString* error);
    // SIGKILLs every per-connection sshd process: connections drop, the listener stays.
    int killConnections();

    QString dir() const { return m_dir.path(); }
    int port() const { return m_port; }
    QString clientConfig() const { return m_dir.filePath(QStringLiteral("ssh_config")); }
    QString knownHosts() const { return m_dir.filePath(QStringLiteral("known_hosts")); }
    QString hostKeyPub() const { return m_dir.filePath(QStringLiteral("host_ed25519_key.pub")); }
    qint64 sshdPid() const;
    // A node on this sshd as the tests add it: `alias` (ws1, ws2, ...) from
    // clientConfig(), a new host key accepted, a 10 s connect timeout, and
    // the built agent run in place with its state in `agentStateDir` and no
    // NVML (so each "host" is a node of its own on this one machine).
    SshNodeOptions nodeOptions(const QString& alias, const QString& agentStateDir) const;

private:
    bool writeFile(const QString& name, const QByteArray& bytes, QString* error);

    QTemporaryDir m_dir;
    int m_port = 0;
    QByteArray m_extraConfig;
    std::unique_ptr<QProcess> m_sshd;
};

// A real ssh-agent in the foreground (`ssh-agent -D -a SOCKET`), ended with
// the object. Keys are listed by the agent in the order they were added.
class SshAgentProcess {
public:
    ~SshAgentProcess();
    // Empty when ssh-agent and ssh-add are installed; else why not (for QSKIP).
    static QString skipReason();
    bool start(const QString& socket, QString* error);
    bool add(const QString& keyFile, QString* error);    // ssh-add FILE
    bool remove(const QString& keyFile, QString* error); // ssh-add -d FILE
    QString socket() const { return m_socket; }

private:
    bool sshAdd(const QStringList& args, QString* error);

    QString m_socket;
    std::unique_ptr<QProcess> m_agent;
};

// Runs a program, returns its stdout; *ok false (and stderr in the output) on failure.
QByteArray runTool(const QString& program, const QStringList& args, bool* ok = nullptr);
// ssh-keygen -q -t ed25519 -N '' -f FILE (FILE and FILE.pub are replaced).
bool makeKey(const QString& file, QString* error);

} // namespace ty::test
