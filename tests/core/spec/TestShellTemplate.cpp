// Params in shell strings (issue #20): a value reaches the command as its
// literal bytes in every quoting context, or the spec is refused saying
// where. The oracle is the real /bin/sh: each filled command writes its
// argument with printf %s into a file, and the bytes must equal the value,
// with no side-effect file created by the hostile values.
#include "core/spec/JobSpec.h"
#include "core/spec/ShellTemplate.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

// Runs argv (a real child process) and returns its exit code.
int runArgv(const QStringList& argv, const QString& workdir)
{
    QProcess p;
    p.setWorkingDirectory(workdir);
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    p.start(argv.front(), argv.mid(1));
    if (!p.waitForFinished(30000))
        return -1;
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
}

} // namespace

class TestShellTemplate : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString sentinel() const { return m_dir.filePath(QStringLiteral("pwned")); }

    QStringList hostileValues() const
    {
        const QString s = sentinel();
        QStringList v{
                QStringLiteral("$(touch %1)").arg(s),
                QStringLiteral("`touch %1`").arg(s),
                QStringLiteral("'; touch %1; '").arg(s),
                QStringLiteral("\"; touch %1; \"").arg(s),
                QStringLiteral("'\"$(touch %1)\"'").arg(s),
                QStringLiteral("\\'$(touch %1)").arg(s),
                QStringLiteral("\\\"$(touch %1)\\").arg(s),
                QStringLiteral("${x:-$(touch %1)}").arg(s),
                QStringLiteral("a\ntouch %1\n").arg(s),
                QStringLiteral(")\ntouch %1\n#").arg(s),
                QStringLiteral("EOF\ntouch %1\nEOF").arg(s),
                QStringLiteral("'"),
                QStringLiteral("\""),
                QStringLiteral("\\"),
                QStringLiteral("\\\\"),
                QStringLiteral("'\\''"),
                QStringLiteral("$HOME"),
                QStringLiteral("$(id)"),
                QStringLiteral("`id`"),
                QStringLiteral("$((1+2))"),
                QStringLiteral(";"),
                QStringLiteral("&&"),
                QStringLiteral("|"),
                QStringLiteral("a b  c"),
                QStringLiteral("\t"),
                QStringLiteral("*"),
                QStringLiteral("?"),
                QStringLiteral("[a-z]*"),
                QStringLiteral("~"),
                QStringLiteral("~root"),
                QStringLiteral("#"),
                QStringLiteral("{a,b}"),
                QStringLiteral("}}"),
                QStringLiteral("{{x}}"),
                QStringLiteral("!"),
                QStringLiteral("-n"),
                QStringLiteral("--"),
                QStringLiteral("A=1"),
                QStringLiteral("if"),
                QStringLiteral("\n"),
                QStringLiteral("trailing\n\n"),
                QString(),
                QStringLiteral(" "),
                QStringLiteral("ünïcødé ✓ 😀"),
                QStringLiteral("0.001"),
                QStringLiteral("%s%d%%"),
                QStringLiteral("\x01\x7f"),
        };
        // NUL-free random strings over ASCII and some non-ASCII, fixed seed.
        QRandomGenerator rng(20);
        const QString alphabet = QStringLiteral(" \t\n'\"\\$`(){}[]*?~#;&|<>!=%-_.,/aZ09éλ€");
        for (int n = 0; n < 120; ++n) {
            QString r;
            const int len = int(rng.bounded(1, 24));
            for (int k = 0; k < len; ++k) {
                if (rng.bounded(4) == 0)
                    r += QChar(char16_t(rng.bounded(1, 0x7f)));
                else
                    r += alphabet.at(rng.bounded(alphabet.size()));
            }
            v.append(r);
        }
        return v;
    }

    // Quoting contexts: (template, what the file must hold given value v).
    struct Context {
        QString command; // %1: the output file (quoted)
        QString prefix, suffix;
    };
    static QList<Context> contexts()
    {
        return {
                {QStringLiteral("printf %s {{x}} > %1"), {}, {}},
                {QStringLiteral("printf %s \"{{x}}\" > %1"), {}, {}},
                {QStringLiteral("printf %s '{{x}}' > %1"), {}, {}},
                {QStringLiteral("printf %s \"pre {{x}} post\" > %1"), QStringLiteral("pre "), QStringLiteral(" post")},
                {QStringLiteral("printf %s 'pre {{x}} post' > %1"), QStringLiteral("pre "), QStringLiteral(" post")},
                {QStringLiteral("printf %s a{{x}}b > %1"), QStringLiteral("a"), QStringLiteral("b")},
                {QStringLiteral("printf %s \"a\"{{x}}'b' > %1"), QStringLiteral("a"), QStringLiteral("b")},
                {QStringLiteral("printf %s {{ x }}{{x}} > %1"), {}, {}}, // doubled: see check()
                {QStringLiteral("v={{x}}; printf %s \"$v\" > %1"), {}, {}},
                {QStringLiteral("printf %s \"$(printf %s {{x}}.)\" > %1"), {}, QStringLiteral(".")},
                {QStringLiteral("printf %s \"$(printf %s \"{{x}}\".)\" > %1"), {}, QStringLiteral(".")},
                {QStringLiteral("printf %s $(printf %s '{{x}}.' | od -An -tx1 | tr -d ' \\n') | xxd -r -p > %1"), {},
                        QStringLiteral(".")},
                {QStringLiteral("cat <<'EOF' >/dev/null\nx{{\nEOF\n# a comment\nprintf %s \"{{x}}\" > %1"), {}, {}},
                {QStringLiteral("( printf %s \"{{x}}\" ) > %1 # done"), {}, {}},
                {QStringLiteral("printf %s \"\\$\"{{x}}\"\\\\\" > %1"), QStringLiteral("$"), QStringLiteral("\\")},
        };
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void everyValueIsLiteralInEveryContext()
    {
        const QStringList values = hostileValues();
        const QList<Context> ctx = contexts();
        const bool haveXxd = !QStandardPaths::findExecutable(QStringLiteral("xxd")).isEmpty();
        int checked = 0;
        for (qsizetype vi = 0; vi < values.size(); ++vi) {
            const QString& value = values.at(vi);
            QStringList script;
            QStringList files;
            for (qsizetype ci = 0; ci < ctx.size(); ++ci) {
                if (ctx[ci].command.contains(QStringLiteral("xxd")) && !haveXxd)
                    continue;
                const QString out = m_dir.filePath(QStringLiteral("out-%1-%2").arg(vi).arg(ci));
                QFile::remove(out);
                const auto filled
                        = fillShellTemplate(ctx[ci].command.arg(singleQuoted(out)), {{QStringLiteral("x"), value}});
                QVERIFY2(!filled.error, qPrintable(filled.error ? filled.error->message : QString()));
                script.append(filled.command);
                files.append(out);
            }
            // One /bin/sh per value: the contexts run one after another.
            QCOMPARE(runArgv({QStringLiteral("/bin/sh"), QStringLiteral("-c"), script.join(u'\n')}, m_dir.path()), 0);
            qsizetype fi = 0;
            for (qsizetype ci = 0; ci < ctx.size(); ++ci) {
                if (ctx[ci].command.contains(QStringLiteral("xxd")) && !haveXxd)
                    continue;
                QByteArray expected = (ctx[ci].prefix + value + ctx[ci].suffix).toUtf8();
                if (ctx[ci].command.contains(QStringLiteral("{{ x }}{{x}}")))
                    expected = (value + value).toUtf8();
                const QByteArray got = readAll(files.at(fi++));
                if (got != expected)
                    QFAIL(qPrintable(
                            QStringLiteral("context %1 value %2: got %3, expected %4")
                                    .arg(ctx[ci].command, QString::fromLatin1(value.toUtf8().toHex()),
                                            QString::fromLatin1(got.toHex()), QString::fromLatin1(expected.toHex()))));
                ++checked;
            }
            QVERIFY2(!QFile::exists(sentinel()), qPrintable(QStringLiteral("value %1 ran code").arg(value)));
        }
        QVERIFY(checked >= values.size() * (ctx.size() - 1));
    }

    void refusedContexts_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<qsizetype>("offset");
        QTest::addColumn<QString>("message");
        QTest::newRow("backticks") << QStringLiteral("echo `echo {{x}}`") << qsizetype(11)
                                   << QStringLiteral("{{x}} is inside `...`");
        QTest::newRow("param expansion") << QStringLiteral("echo ${v:-{{x}}}") << qsizetype(10)
                                         << QStringLiteral("{{x}} is inside ${...}");
        QTest::newRow("arithmetic") << QStringLiteral("echo $(( {{x}} + 1 ))") << qsizetype(9)
                                    << QStringLiteral("{{x}} is inside $((...))");
        QTest::newRow("comment") << QStringLiteral("echo a # {{x}}") << qsizetype(9)
                                 << QStringLiteral("{{x}} is inside a comment");
        QTest::newRow("heredoc") << QStringLiteral("cat <<EOF\n{{x}}\nEOF") << qsizetype(10)
                                 << QStringLiteral("{{x}} is inside a here-document");
        QTest::newRow("heredoc tabs") << QStringLiteral("cat <<-E; echo\n\ta\n\tE\necho '{{x}}") << qsizetype(25)
                                      << QString();
        QTest::newRow("backslash") << QStringLiteral("echo \\{{x}}") << qsizetype(6)
                                   << QStringLiteral("{{x}} comes right after a backslash");
        QTest::newRow("backslash in dq") << QStringLiteral("echo \"\\{{x}}\"") << qsizetype(7)
                                         << QStringLiteral("{{x}} comes right after a backslash");
        QTest::newRow("dollar-quote") << QStringLiteral("echo $'a\\'' {{x}}") << qsizetype(12)
                                      << QStringLiteral("{{x}} comes after a $'...' string");
        QTest::newRow("case in cmdsub") << QStringLiteral("echo \"$(case a in a) echo \"{{x}}\";; esac)\"")
                                        << qsizetype(27) << QStringLiteral("{{x}} comes after a case statement");
        QTest::newRow("quotes in backticks") << QStringLiteral("echo `echo \")\"` {{x}}") << qsizetype(16)
                                             << QStringLiteral("{{x}} comes after quotes inside `...`");
        QTest::newRow("unknown") << QStringLiteral("echo {{x}} {{y}}") << qsizetype(11)
                                 << QStringLiteral("{{y}} is an unknown param");
    }

    void refusedContexts()
    {
        QFETCH(QString, command);
        QFETCH(qsizetype, offset);
        QFETCH(QString, message);
        const auto filled = fillShellTemplate(command, {{QStringLiteral("x"), QStringLiteral("v")}});
        if (message.isEmpty()) { // a context that is fine after all: the heredoc ended, the quote is open
            QVERIFY(!filled.error);
            QCOMPARE(filled.command, QStringLiteral("cat <<-E; echo\n\ta\n\tE\necho '''v''"));
            return;
        }
        QVERIFY(filled.error);
        QCOMPARE(filled.error->offset, offset);
        QVERIFY2(filled.error->message.startsWith(message), qPrintable(filled.error->message));
    }

    // The job spec: shell strings, list commands (plain and `sh -c`),
    // --param overrides and sweeps all run through real processes.
    void jobSpecsRunLiteral()
    {
        const QString value = QStringLiteral("$(touch %1)'\"`touch %1`;\n*").arg(sentinel());
        const QString out = m_dir.filePath(QStringLiteral("spec-out"));
        const QString yamlOut = QString(out).replace(u'\'', QStringLiteral("''"));
        const QStringList commands{
                QStringLiteral("command: 'printf %s \"x={{x}}\" > %1'\n").arg(yamlOut),
                QStringLiteral("command: 'printf %s ''x={{x}}'' > %1'\n").arg(yamlOut),
                QStringLiteral("command: [sh, -c, 'printf %s \"x={{x}}\" > \"$0\"', '%1']\n").arg(yamlOut),
                QStringLiteral("command: [env, A=1, bash, -ec, 'printf %s x={{x}} > %1']\n").arg(yamlOut),
                QStringLiteral("command: [/usr/bin/printf, '%s', 'x={{x}}']\n"),
        };
        for (const QString& command : commands) {
            for (int how = 0; how < 3; ++how) { // 0: params, 1: --param, 2: sweep
                QFile::remove(out);
                QString yaml = command;
                QMap<QString, QString> overrides;
                if (how == 0)
                    yaml += QStringLiteral("params:\n  x: \"%1\"\n")
                                    .arg(QString(value)
                                                    .replace(u'"', QStringLiteral("\\\""))
                                                    .replace(u'\n', QStringLiteral("\\n")));
                else if (how == 1) {
                    yaml += QStringLiteral("params: {x: harmless}\n");
                    overrides.insert(QStringLiteral("x"), value);
                } else {
                    yaml += QStringLiteral("sweep:\n  x: [harmless, \"%1\"]\n")
                                    .arg(QString(value)
                                                    .replace(u'"', QStringLiteral("\\\""))
                                                    .replace(u'\n', QStringLiteral("\\n")));
                }
                auto spec = parseJobSpec(yaml, QStringLiteral("j.yaml"), m_dir.path(), overrides);
                QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
                JobSpec one = *spec;
                if (how == 2) {
                    const auto runs = expandSweep(*spec);
                    QVERIFY(runs);
                    QCOMPARE(runs->size(), 2);
                    one = runs->at(1);
                }
                if (one.argv.front() == u"/usr/bin/printf") {
                    QCOMPARE(one.argv.last(), u"x=" + value);
                    continue;
                }
                QCOMPARE(runArgv(one.argv, m_dir.path()), 0);
                QCOMPARE(readAll(out), (u"x=" + value).toUtf8());
                QVERIFY2(!QFile::exists(sentinel()), qPrintable(yaml));
            }
        }
    }

    void jobSpecRefusalsSayWhere()
    {
        const auto bad
                = parseJobSpec(QStringLiteral("name: t\ncommand: |\n  echo ok\n  echo `date {{x}}`\nparams: {x: 1}\n"),
                        QStringLiteral("j.yaml"), QStringLiteral("/"));
        QVERIFY(!bad);
        QCOMPARE(bad.error().message,
                QStringLiteral(
                        "j.yaml:4:14: 'command': {{x}} is inside `...`, where no quoting is sure (write $( ) instead)"));
        const auto list
                = parseJobSpec(QStringLiteral("command: [bash, -c, 'echo {{y}} # {{x}}']\nparams: {x: 1, y: 2}\n"),
                        QStringLiteral("j.yaml"), QStringLiteral("/"));
        QVERIFY(!list);
        QCOMPARE(list.error().message, QStringLiteral("j.yaml:1:35: 'command': {{x}} is inside a comment"));
        const auto nul = parseJobSpec(QStringLiteral("command: [echo, '{{x}}']\nparams: {x: \"a\\0b\"}\n"),
                QStringLiteral("j.yaml"), QStringLiteral("/"));
        QVERIFY(!nul);
        QCOMPARE(nul.error().message,
                QStringLiteral("j.yaml:2:9: param 'x' holds a NUL character, which no argument can carry"));
    }
};

QTEST_GUILESS_MAIN(TestShellTemplate)
#include "TestShellTemplate.moc"
