// {{params}} in shell commands: every value reaches the command as its
// literal text, in every quoting context, checked by running real /bin/sh
// (dash on Debian) and bash on hostile values; contexts that cannot be made
// safe are refused with where.
#include "TestSupport.h"
#include "spec/JobSpec.h"
#include "spec/ShellTemplate.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

namespace {

// Values that have broken shell quoting somewhere.
QStringList hostileValues(const QString& marker)
{
    QStringList v{
        QStringLiteral("$(touch %1)").arg(marker),
        QStringLiteral("`touch %1`").arg(marker),
        QStringLiteral("'; touch %1; '").arg(marker),
        QStringLiteral("\"; touch %1; \"").arg(marker),
        QStringLiteral("'\"$(touch %1)\"'").arg(marker),
        QStringLiteral("\\'; touch %1 #").arg(marker),
        QStringLiteral("\\\"; touch %1 #").arg(marker),
        QStringLiteral("x\ntouch %1\n").arg(marker),
        QStringLiteral("$'\\x41'; touch %1").arg(marker),
        QStringLiteral("${IFS}touch${IFS}%1").arg(marker),
        QStringLiteral("a' \"b\" 'c"),
        QStringLiteral("\\"),
        QStringLiteral("\\\\"),
        QStringLiteral("'"),
        QStringLiteral("\""),
        QStringLiteral("*"),
        QStringLiteral("~"),
        QStringLiteral("~root"),
        QStringLiteral("-n"),
        QStringLiteral("!!"),
        QStringLiteral("%s%d%n"),
        QStringLiteral("  two  spaces\tand a tab  "),
        QStringLiteral("ünïcode ✓ 中文"),
        QString(),
        QStringLiteral("$HOME"),
        QStringLiteral("}}{{x}}"),
        QStringLiteral("a;b|c&d>e<f(g)h"),
    };
    // Random strings over the characters that matter to a shell.
    const QString alphabet = QStringLiteral("'\"\\$`(){}[]*?~!#;&|<> \t\nabc-=%^");
    QRandomGenerator rng(20261202);
    for (int i = 0; i < 120; ++i) {
        QString s;
        const int len = int(rng.bounded(1, 14));
        for (int k = 0; k < len; ++k)
            s += alphabet.at(int(rng.bounded(alphabet.size())));
        v << s;
    }
    return v;
}

// A command in which {{x}} sits in one quoting context, and what the shell
// must write for a value (printf %s of one word).
struct Context {
    const char* name;
    QString command; // %1: output file
    QString (*expect)(const QString& value);
};

QString same(const QString& v) { return v; }
QString wrapped(const QString& v) { return QStringLiteral("pre") + v + QStringLiteral("post"); }
QString thrice(const QString& v) { return QStringLiteral("a") + v + QStringLiteral("b") + v + QStringLiteral("c") + v; }
QString noTrailingNewlines(const QString& v)
{
    QString s = v; // $( ) removes trailing newlines
    while (s.endsWith(u'\n'))
        s.chop(1);
    return s;
}

const Context kContexts[] = {
    {"unquoted", QStringLiteral("printf %s {{x}} > %1"), &same},
    {"unquoted in a word", QStringLiteral("printf %s pre{{x}}post > %1"), &wrapped},
    {"single quotes", QStringLiteral("printf %s 'pre{{x}}post' > %1"), &wrapped},
    {"double quotes", QStringLiteral("printf %s \"pre{{x}}post\" > %1"), &wrapped},
    {"all three in one word", QStringLiteral("printf %s a{{x}}\"b{{x}}\"'c{{x}}' > %1"), &thrice},
    {"command substitution in double quotes", QStringLiteral("printf %s \"$(printf %s {{x}})\" > %1"), &noTrailingNewlines},
    {"double quotes in command substitution", QStringLiteral("printf %s \"$(printf %s \"{{x}}\")\" > %1"), &noTrailingNewlines},
    {"after a comment line", QStringLiteral("# a comment\nprintf %s '{{x}}' > %1"), &same},
};

} // namespace

class TestShellTemplate final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyValueArrivesLiterallyInEveryContext_data()
    {
        QTest::addColumn<QString>("shell");
        QTest::newRow("sh") << QStringLiteral("/bin/sh");
        if (QFileInfo::exists(QStringLiteral("/bin/bash")))
            QTest::newRow("bash") << QStringLiteral("/bin/bash");
    }

    void everyValueArrivesLiterallyInEveryContext()
    {
        QFETCH(QString, shell);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString marker = dir.filePath(QStringLiteral("pwned"));
        const QString outFile = dir.filePath(QStringLiteral("out"));
        int checked = 0;
        for (const Context& ctx : kContexts) {
            for (const QString& value : hostileValues(marker)) {
                // Through the job spec, as `trainyardctl submit --param x=...` does.
                const QString yaml = QStringLiteral("command: %1\nparams: {x: placeholder}\n")
                                         .arg(QStringLiteral("\"") + QString(ctx.command.arg(outFile))
                                                                         .replace(u'\\', QStringLiteral("\\\\"))
                                                                         .replace(u'"', QStringLiteral("\\\""))
                                                                         .replace(u'\n', QStringLiteral("\\n"))
                                              + u'"');
                const auto spec = parseJobSpec(yaml, QStringLiteral("job.yaml"), dir.path(), {{QStringLiteral("x"), value}});
                QVERIFY2(spec, qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(ctx.name), spec ? QString() : spec.error().message)));
                QVERIFY(spec->shellCommand);
                QFile::remove(outFile);
                QProcess sh;
                sh.start(shell, {QStringLiteral("-c"), spec->argv.at(2)});
                QVERIFY(sh.waitForFinished(10000));
                const QByteArray got = test::readFile(outFile);
                const QString why = QStringLiteral("%1, %2, value [%3], ran [%4], stderr [%5]")
                                        .arg(shell, QLatin1String(ctx.name), value, spec->argv.at(2),
                                             QString::fromUtf8(sh.readAllStandardError()));
                QVERIFY2(!QFileInfo::exists(marker), qPrintable(QStringLiteral("the value ran: ") + why));
                QVERIFY2(sh.exitCode() == 0, qPrintable(why));
                QVERIFY2(got == ctx.expect(value).toUtf8(), qPrintable(QStringLiteral("got [%1]: ").arg(QString::fromUtf8(got)) + why));
                ++checked;
            }
        }
        QCOMPARE(checked, int(std::size(kContexts)) * int(hostileValues(marker).size()));
    }

    void aShellInAListCommandIsAShellString()
    {
        // command: [sh, -c, 'echo "x={{x}}"']: the script is a shell string too.
        QTemporaryDir dir;
        const QString marker = dir.filePath(QStringLiteral("pwned"));
        const auto spec = parseJobSpec(QStringLiteral("command: [/bin/sh, -ec, 'printf %s \"x={{x}}\"']\nparams: {x: ''}\n"),
                                       QStringLiteral("job.yaml"), dir.path(),
                                       {{QStringLiteral("x"), QStringLiteral("$(touch %1)").arg(marker)}});
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().message));
        QProcess sh;
        sh.start(spec->argv.front(), spec->argv.mid(1));
        QVERIFY(sh.waitForFinished(10000));
        QVERIFY(!QFileInfo::exists(marker));
        QCOMPARE(QString::fromUtf8(sh.readAllStandardOutput()), QStringLiteral("x=$(touch %1)").arg(marker));
        // Any other program's argument is its text, substituted as it is.
        const auto py = parseJobSpec(QStringLiteral("command: [python3, -c, 'print(\"{{x}}\")']\nparams: {x: \"a'b\"}\n"),
                                     QStringLiteral("job.yaml"), dir.path());
        QVERIFY(py);
        QCOMPARE(py->argv.at(2), QStringLiteral("print(\"a'b\")"));
        QVERIFY(isShellScriptArgument({QStringLiteral("/usr/bin/bash"), QStringLiteral("-lc"), QStringLiteral("x")}, 2));
        QVERIFY(!isShellScriptArgument({QStringLiteral("bash"), QStringLiteral("script.sh"), QStringLiteral("x")}, 2));
        QVERIFY(!isShellScriptArgument({QStringLiteral("bash"), QStringLiteral("--noprofile"), QStringLiteral("x")}, 2));
    }

    void unsafeContextsAreRefusedSayingWhere_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("error");
        QTest::newRow("backquotes") << QStringLiteral("echo `echo {{x}}`") << QStringLiteral("inside `backquotes`");
        QTest::newRow("backquotes in double quotes") << QStringLiteral("echo \"`echo {{x}}`\"") << QStringLiteral("inside `backquotes`");
        QTest::newRow("${...}") << QStringLiteral("echo ${A:-{{x}}}") << QStringLiteral("inside ${...}");
        QTest::newRow("$((...))") << QStringLiteral("echo $(( {{x}} + 1 ))") << QStringLiteral("inside $((...))");
        QTest::newRow("$'...'") << QStringLiteral("echo $'a{{x}}'") << QStringLiteral("inside $'...'");
        QTest::newRow("comment") << QStringLiteral("echo hi # {{x}}") << QStringLiteral("inside a # comment");
        QTest::newRow("here-document") << QStringLiteral("cat <<EOF\n{{x}}\nEOF") << QStringLiteral("inside a here-document");
        QTest::newRow("after a backslash") << QStringLiteral("echo \\{{x}}") << QStringLiteral("right after a backslash");
        QTest::newRow("after a $") << QStringLiteral("echo ${{x}}") << QStringLiteral("right after a $");
    }

    void unsafeContextsAreRefusedSayingWhere()
    {
        QFETCH(QString, command);
        QFETCH(QString, error);
        const QString yaml = QStringLiteral("params: {x: 1}\ncommand: \"%1\"\n")
                                 .arg(QString(command).replace(u'\\', QStringLiteral("\\\\")).replace(u'"', QStringLiteral("\\\"")).replace(u'\n', QStringLiteral("\\n")));
        const auto spec = parseJobSpec(yaml, QStringLiteral("job.yaml"), QDir::tempPath());
        QVERIFY2(!spec, qPrintable(command));
        const QString message = spec.error().message;
        QVERIFY2(message.startsWith(QStringLiteral("job.yaml:2:10: {{x}} ")), qPrintable(message));
        QVERIFY2(message.contains(error), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("(at character %1 of the command)").arg(command.indexOf(QStringLiteral("{{x}}")) + 1)),
                 qPrintable(message));
    }

    void hereDocumentsEndAndAfterThemValuesAreFilled()
    {
        const auto value = [](const QString&) -> std::optional<QString> { return QStringLiteral("a'b"); };
        const auto filled = fillShellTemplate(QStringLiteral("cat <<'EOF' > f\nbody $x\nEOF\necho {{x}} '{{x}}'"), value);
        QVERIFY2(filled, qPrintable(filled ? QString() : filled.error().message));
        QCOMPARE(*filled, QStringLiteral("cat <<'EOF' > f\nbody $x\nEOF\necho 'a'\\''b' 'a'\\''b'"));
        const auto tabs = fillShellTemplate(QStringLiteral("cat <<-END\n\tbody\n\tEND\necho \"{{x}}\""), value);
        QVERIFY2(tabs, qPrintable(tabs ? QString() : tabs.error().message));
        QCOMPARE(*tabs, QStringLiteral("cat <<-END\n\tbody\n\tEND\necho \"\"'a'\\''b'\"\""));
    }
};

QTEST_GUILESS_MAIN(TestShellTemplate)
#include "TestShellTemplate.moc"
