#include "dialogs/CommandLine.h"
#include "dialogs/SubmitDialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestSubmitDialog : public QObject {
    Q_OBJECT

private:
    template <typename T>
    static T* child(QWidget& w, const char* name)
    {
        T* c = w.findChild<T*>(QString::fromLatin1(name));
        if (!c)
            qFatal("no child %s", name);
        return c;
    }
    static QPushButton* okButton(SubmitDialog& d)
    {
        return child<QDialogButtonBox>(d, "buttonBox")->button(QDialogButtonBox::Ok);
    }

private Q_SLOTS:
    void commandLineQuoting()
    {
        QCOMPARE(*CommandLine::split(QStringLiteral("python3 train.py --name 'my run' --x \"a \\\"b\\\"\" c\\ d $HOME;")),
                 (QStringList{QStringLiteral("python3"), QStringLiteral("train.py"), QStringLiteral("--name"),
                              QStringLiteral("my run"), QStringLiteral("--x"), QStringLiteral("a \"b\""),
                              QStringLiteral("c d"), QStringLiteral("$HOME;")}));
        const QStringList tricky{QStringLiteral("echo"), QStringLiteral("it's"), QStringLiteral("$VAR; ls"), QString(),
                                 QStringLiteral("plain-word_1.0")};
        QCOMPARE(CommandLine::join(tricky), QStringLiteral("echo 'it'\\''s' '$VAR; ls' '' plain-word_1.0"));
        QCOMPARE(*CommandLine::split(CommandLine::join(tricky)), tricky);
        const auto bad = CommandLine::split(QStringLiteral("echo 'open"));
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.contains(QStringLiteral("column 6")), qPrintable(bad.error().message));
    }

    void formProducesValidatedSpec()
    {
        QTemporaryDir dir;
        SubmitDialog d;
        QCOMPARE(d.objectName(), QStringLiteral("submitDialog"));
        QVERIFY(!okButton(d)->isEnabled()); // no command yet
        child<QLineEdit>(d, "nameEdit")->setText(QStringLiteral("lr sweep"));
        child<QLineEdit>(d, "commandEdit")->setText(QStringLiteral("python3 train.py --lr {{lr}} --tag 'a b'"));
        child<QLineEdit>(d, "workdirEdit")->setText(dir.path());
        child<QPlainTextEdit>(d, "envEdit")->setPlainText(QStringLiteral("PYTHONUNBUFFERED=1\nCUDA_LAUNCH_BLOCKING=1"));
        child<QPlainTextEdit>(d, "paramsEdit")->setPlainText(QStringLiteral("lr=0.01"));
        child<QSpinBox>(d, "gpusSpin")->setValue(1);
        child<QSpinBox>(d, "prioritySpin")->setValue(5);
        child<QLineEdit>(d, "tagsEdit")->setText(QStringLiteral("sweep, digits"));
        QVERIFY2(okButton(d)->isEnabled(), qPrintable(d.errorText()));
        d.accept();
        QCOMPARE(d.result(), int(QDialog::Accepted));
        const JobSpec s = d.spec();
        QCOMPARE(s.name, QStringLiteral("lr sweep"));
        QCOMPARE(s.argv, (QStringList{QStringLiteral("python3"), QStringLiteral("train.py"), QStringLiteral("--lr"),
                                      QStringLiteral("0.01"), QStringLiteral("--tag"), QStringLiteral("a b")}));
        QVERIFY(!s.shellCommand);
        QCOMPARE(s.workdir, dir.path());
        QCOMPARE(s.env.value(QStringLiteral("CUDA_LAUNCH_BLOCKING")), QStringLiteral("1"));
        QCOMPARE(s.params.value(QStringLiteral("lr")), QStringLiteral("0.01"));
        QCOMPARE(s.resources.gpus, 1);
        QCOMPARE(s.priority, 5);
        QCOMPARE(s.tags, (QStringList{QStringLiteral("sweep"), QStringLiteral("digits")}));

        // Shell mode keeps the line for /bin/sh -c.
        child<QComboBox>(d, "commandModeCombo")->setCurrentIndex(1);
        child<QLineEdit>(d, "commandEdit")->setText(QStringLiteral("echo $HOME; ls | wc -l"));
        auto shell = d.validate();
        QVERIFY(shell);
        QCOMPARE(shell->argv, (QStringList{QStringLiteral("/bin/sh"), QStringLiteral("-c"), QStringLiteral("echo $HOME; ls | wc -l")}));

        // Errors disable Submit and say why.
        child<QPlainTextEdit>(d, "envEdit")->setPlainText(QStringLiteral("OK=1\nnot an assignment"));
        QVERIFY(!okButton(d)->isEnabled());
        QVERIFY2(d.errorText().contains(QStringLiteral("line 2")), qPrintable(d.errorText()));
    }

    void yamlModeShowsErrorWithLineAndColumn()
    {
        QTemporaryDir dir;
        SubmitDialog d;
        const QString origin = dir.filePath(QStringLiteral("job.yaml"));
        d.setSpecText(QStringLiteral("name: x\ncommand: [python3, t.py]\nworkdir: .\ncomand: oops\n"), origin, dir.path());
        QVERIFY(d.mode() == SubmitDialog::Mode::Yaml);
        QVERIFY(!okButton(d)->isEnabled());
        QVERIFY2(d.errorText().startsWith(origin + QStringLiteral(":4:1:")), qPrintable(d.errorText()));
        QVERIFY(d.errorText().contains(QStringLiteral("comand")));
        QCOMPARE(child<QPlainTextEdit>(d, "yamlEdit")->extraSelections().size(), 1);
        QCOMPARE(child<QPlainTextEdit>(d, "yamlEdit")->extraSelections().first().cursor.blockNumber(), 3);
        // Fix it in place: Submit becomes possible.
        child<QPlainTextEdit>(d, "yamlEdit")->setPlainText(QStringLiteral("name: x\ncommand: [python3, t.py]\nworkdir: .\n"));
        QVERIFY2(okButton(d)->isEnabled(), qPrintable(d.errorText()));
        QVERIFY(d.errorText().isEmpty());
        auto spec = d.validate();
        QVERIFY(spec);
        QCOMPARE(spec->workdir, QDir(dir.path()).absolutePath());
        // Switching to the form carries the spec over.
        child<QTabWidget>(d, "modeTabs")->setCurrentIndex(0);
        QCOMPARE(child<QLineEdit>(d, "commandEdit")->text(), QStringLiteral("python3 t.py"));
        QCOMPARE(child<QLineEdit>(d, "nameEdit")->text(), QStringLiteral("x"));
    }
};

QTEST_MAIN(TestSubmitDialog)
#include "TestSubmitDialog.moc"
