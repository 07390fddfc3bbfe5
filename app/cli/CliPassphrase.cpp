#include "CliPassphrase.h"

#include "core/common/TerminalEchoGuard.h"

#include <QProcess>
#include <QString>

#include <algorithm>
#include <cstdio>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

namespace ty::cli {

namespace {

// Asks for key passphrases on the terminal (no echo); without a terminal
// (batch mode) it declines, and authentication says so.
class TtyPassphraseProvider final : public SshPassphraseProvider {
public:
    std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override
    {
        FILE* tty = std::fopen("/dev/tty", "r+");
        if (!tty)
            return std::nullopt;
        // Echo off before the question: what is typed after seeing it is
        // never flushed away, nor shown (OpenSSH's readpassphrase, same order).
        // Back on when answered, and on Ctrl+C (SIGINT) or SIGTERM meanwhile.
        std::optional<TerminalEchoGuard> quiet(std::in_place, fileno(tty));
        std::fprintf(tty, "%s: %s", qPrintable(node), qPrintable(prompt.trimmed()));
        if (!prompt.trimmed().endsWith(u':'))
            std::fprintf(tty, ":");
        std::fprintf(tty, " ");
        std::fflush(tty);
        char buf[1024] = {};
        const bool got = std::fgets(buf, sizeof buf, tty) != nullptr;
        quiet.reset();
        std::fprintf(tty, "\n");
        std::fclose(tty);
        QByteArray p(buf);
        std::fill(std::begin(buf), std::end(buf), '\0');
        while (p.endsWith('\n') || p.endsWith('\r'))
            p.chop(1);
        if (!got)
            return std::nullopt;
        return p;
    }
};

// Asks a program for the passphrase, as OpenSSH's SSH_ASKPASS does: it gets
// the prompt as its argument and prints the passphrase on stdout. Only held
// in memory (and wiped by the session after use).
class AskpassPassphraseProvider final : public SshPassphraseProvider {
public:
    explicit AskpassPassphraseProvider(QString program)
        : m_program(std::move(program))
    { }
    std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override
    {
        QProcess p;
        p.start(m_program, {QStringLiteral("%1: %2").arg(node, prompt.trimmed())});
        // Said here (stderr: this runs on the node's SSH thread): the
        // authentication error can only say that no passphrase came.
        if (!p.waitForStarted(10000)) {
            std::fprintf(stderr,
                    "trainyardctl: cannot run the askpass program %s (TRAINYARD_ASKPASS or SSH_ASKPASS): %s\n",
                    qPrintable(m_program), qPrintable(p.errorString()));
            return std::nullopt;
        }
        if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
            std::fprintf(stderr, "trainyardctl: the askpass program %s gave no passphrase (%s)\n",
                    qPrintable(m_program),
                    p.exitStatus() == QProcess::NormalExit
                            ? qPrintable(QStringLiteral("exit status %1").arg(p.exitCode()))
                            : "it did not finish");
            return std::nullopt;
        }
        QByteArray out = p.readAllStandardOutput();
        while (out.endsWith('\n') || out.endsWith('\r'))
            out.chop(1);
        return out;
    }

private:
    QString m_program;
};

} // namespace

std::shared_ptr<SshPassphraseProvider> passphraseProvider()
{
    // $TRAINYARD_ASKPASS, or $SSH_ASKPASS with SSH_ASKPASS_REQUIRE=force, as OpenSSH.
    QString askpass = qEnvironmentVariable("TRAINYARD_ASKPASS");
    if (askpass.isEmpty() && qEnvironmentVariable("SSH_ASKPASS_REQUIRE") == u"force")
        askpass = qEnvironmentVariable("SSH_ASKPASS");
    if (!askpass.isEmpty())
        return std::make_shared<AskpassPassphraseProvider>(askpass);
    // Batch mode, as OpenSSH's: no terminal to ask on. Only a missing
    // controlling terminal counts, not stdin: `cat spec | trainyardctl submit -`
    // typed at a terminal still asks there.
    const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (tty < 0)
        return nullptr;
    ::close(tty);
    return std::make_shared<TtyPassphraseProvider>();
}

} // namespace ty::cli
