#include "CliPassphrase.h"

#include "core/common/TerminalEchoGuard.h"
#include "core/common/TerminalEscape.h"

#include <QMutex>
#include <QProcess>
#include <QString>

#include <algorithm>
#include <cstdio>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

namespace ty::cli {

namespace {

// One line typed on `tty` after "node: prompt" (echo off for a secret), or
// nullopt at end of input. The caller has printed everything else.
std::optional<QByteArray> readAnswer(FILE* tty, const QString& node, const QString& prompt, bool secret)
{
    // Echo off before the question: what is typed after seeing it is never
    // flushed away, nor shown (OpenSSH's readpassphrase, same order). Back
    // on when answered, and on Ctrl+C (SIGINT) or SIGTERM meanwhile.
    std::optional<TerminalEchoGuard> quiet;
    if (secret)
        quiet.emplace(fileno(tty));
    std::fprintf(tty, "%s: %s", qPrintable(node), qPrintable(prompt.trimmed()));
    if (!prompt.trimmed().endsWith(u':'))
        std::fprintf(tty, ":");
    std::fprintf(tty, " ");
    std::fflush(tty);
    char buf[1024] = {};
    const bool got = std::fgets(buf, sizeof buf, tty) != nullptr;
    if (secret) {
        quiet.reset();
        std::fprintf(tty, "\n"); // the Enter typed was not shown
    }
    QByteArray p(buf);
    std::fill(std::begin(buf), std::end(buf), '\0');
    while (p.endsWith('\n') || p.endsWith('\r'))
        p.chop(1);
    if (!got)
        return std::nullopt;
    return p;
}

// A server's text made safe for the terminal, line by line (an instruction
// may have several; control characters and escapes never reach the
// terminal as such). Empty lines at its end are dropped.
QStringList serverLines(const QString& text)
{
    QStringList lines;
    for (QString line : text.split(u'\n')) {
        line.remove(u'\r');
        lines << escapeForTerminal(line);
    }
    while (!lines.isEmpty() && lines.last().trimmed().isEmpty())
        lines.removeLast();
    return lines;
}

// Asks on the terminal: key passphrases (no echo) and keyboard-interactive
// questions (the server's name and instruction first, then each prompt,
// echoed only where the server says so); without a terminal (batch mode)
// it declines, and authentication says so. One question at a time: nodes
// that log in at once wait for each other's answers (and one echo guard).
class TtyPassphraseProvider final : public SshPassphraseProvider {
public:
    std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override
    {
        QMutexLocker lock(&m_terminal);
        FILE* tty = std::fopen("/dev/tty", "r+");
        if (!tty)
            return std::nullopt;
        std::optional<QByteArray> p = readAnswer(tty, node, prompt, true);
        std::fclose(tty);
        return p;
    }

    std::optional<QList<QByteArray>> answers(const QString& node, const SshLoginQuestions& questions) override
    {
        QMutexLocker lock(&m_terminal);
        FILE* tty = std::fopen("/dev/tty", "r+");
        if (!tty)
            return std::nullopt;
        for (const QString& line : serverLines(questions.name))
            std::fprintf(tty, "%s: %s\n", qPrintable(node), qPrintable(line));
        for (const QString& line : serverLines(questions.instruction))
            std::fprintf(tty, "%s\n", qPrintable(line));
        QList<QByteArray> out;
        for (const SshLoginPrompt& p : questions.prompts) {
            std::optional<QByteArray> a = readAnswer(tty, node, escapeForTerminal(p.text), !p.echo);
            if (!a) {
                for (QByteArray& given : out)
                    given.fill('\0');
                std::fclose(tty);
                return std::nullopt;
            }
            out << std::move(*a);
        }
        std::fclose(tty);
        return out;
    }

private:
    QMutex m_terminal;
};

// Asks a program for passphrases and login answers, as OpenSSH's
// SSH_ASKPASS does: it gets the prompt as its argument and prints the answer
// on stdout. Only held in memory (and wiped by the session after use).
class AskpassPassphraseProvider final : public SshPassphraseProvider {
public:
    explicit AskpassPassphraseProvider(QString program)
        : m_program(std::move(program))
    { }
    std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override
    {
        return run(QStringLiteral("%1: %2").arg(node, prompt.trimmed()));
    }

    // Each prompt is a question of its own, as OpenSSH asks it: the
    // argument is "node: " and the server's name and instruction (when it
    // gave them) and the prompt, one a line.
    std::optional<QList<QByteArray>> answers(const QString& node, const SshLoginQuestions& questions) override
    {
        QStringList context;
        for (const QString& text : {questions.name, questions.instruction})
            if (!text.trimmed().isEmpty())
                context << text.trimmed();
        QList<QByteArray> out;
        for (const SshLoginPrompt& p : questions.prompts) {
            std::optional<QByteArray> a = run(QStringLiteral("%1: %2").arg(
                    node, QStringList(context + QStringList{p.text.trimmed()}).join(u'\n')));
            if (!a) {
                for (QByteArray& given : out)
                    given.fill('\0');
                return std::nullopt;
            }
            out << std::move(*a);
        }
        return out;
    }

private:
    std::optional<QByteArray> run(const QString& argument)
    {
        QProcess p;
        p.start(m_program, {argument});
        // Said here (stderr: this runs on the node's SSH thread): the
        // authentication error can only say that no answer came.
        if (!p.waitForStarted(10000)) {
            std::fprintf(stderr,
                    "trainyardctl: cannot run the askpass program %s (TRAINYARD_ASKPASS or SSH_ASKPASS): %s\n",
                    qPrintable(m_program), qPrintable(p.errorString()));
            return std::nullopt;
        }
        if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
            std::fprintf(stderr, "trainyardctl: the askpass program %s gave no answer (%s)\n", qPrintable(m_program),
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
