#include "ui/dialogs/CommandLine.h"
#include "ui/dialogs/SubmitDialog.h"

#include <QApplication>
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
    template <typename T> static T* child(QWidget& w, const char* name)
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
        QCOMPARE(*CommandLine::split(
                         QStringLiteral("python3 train.py --name 'my run' --x \"a \\\"b\\\"\" c\\ d $HOME;")),
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
        QCOMPARE(s.argv,
                (QStringList{QStringLiteral("python3"), QStringLiteral("train.py"), QStringLiteral("--lr"),
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
        QCOMPARE(shell->argv,
                (QStringList{
                        QStringLiteral("/bin/sh"), QStringLiteral("-c"), QStringLiteral("echo $HOME; ls | wc -l")}));

        // Errors disable Submit and say why.
        child<QPlainTextEdit>(d, "envEdit")->setPlainText(QStringLiteral("OK=1\nnot an assignment"));
        QVERIFY(!okButton(d)->isEnabled());
        QVERIFY2(d.errorText().contains(QStringLiteral("line 2")), qPrintable(d.errorText()));
    }

    void everyMnemonicLabelHasABuddy()
    {
        // A label with '&' and no buddy shows the '&' itself ("&Command:").
        SubmitDialog d;
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        QStringList literal;
        for (QLabel* l : d.findChildren<QLabel*>())
            if (l->text().contains(u'&') && !l->buddy() && l->textFormat() != Qt::RichText)
                literal << l->text();
        QVERIFY2(literal.isEmpty(), qPrintable(literal.join(QStringLiteral(", "))));
        // Alt+C reaches the command, Alt+W the working directory.
        auto* command = child<QLineEdit>(d, "commandEdit");
        auto* workdir = child<QLineEdit>(d, "workdirEdit");
        QLabel* commandLabel = nullptr;
        QLabel* workdirLabel = nullptr;
        for (QLabel* l : d.findChildren<QLabel*>()) {
            if (l->buddy() == command)
                commandLabel = l;
            if (l->buddy() == workdir)
                workdirLabel = l;
        }
        QVERIFY(commandLabel && workdirLabel);
        QCOMPARE(commandLabel->text(), QStringLiteral("&Command:"));
        QCOMPARE(workdirLabel->text(), QStringLiteral("&Working directory:"));
    }

    void nothingIsAnErrorBeforeAnythingIsTyped()
    {
        SubmitDialog d;
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        QVERIFY(!okButton(d)->isEnabled()); // nothing to submit yet
        QCOMPARE(d.errorText(), QString());
        QVERIFY(!child<QLabel>(d, "errorLabel")->isVisible());
        // Typing something wrong is an error, shown at once.
        child<QPlainTextEdit>(d, "envEdit")->setPlainText(QStringLiteral("not an assignment"));
        QVERIFY2(!d.errorText().isEmpty(), "an edit that leaves the spec invalid must say why");
        QVERIFY(child<QLabel>(d, "errorLabel")->isVisible());
    }

    void rowsStayWhereTheyAreWhenTheErrorGoes()
    {
        SubmitDialog d;
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        auto* command = child<QLineEdit>(d, "commandEdit");
        auto* tags = child<QLineEdit>(d, "tagsEdit");
        auto* buttons = child<QDialogButtonBox>(d, "buttonBox");
        const auto where = [&] {
            QApplication::processEvents();
            return QList<int>{
                    command->mapTo(&d, QPoint()).y(), tags->mapTo(&d, QPoint()).y(), buttons->mapTo(&d, QPoint()).y()};
        };
        command->setText(QStringLiteral("python3"));
        child<QPlainTextEdit>(d, "envEdit")->setPlainText(QStringLiteral("bad line"));
        QVERIFY(!d.errorText().isEmpty());
        const QList<int> withError = where();
        child<QPlainTextEdit>(d, "envEdit")->setPlainText(QStringLiteral("A=1"));
        QVERIFY2(d.errorText().isEmpty(), qPrintable(d.errorText()));
        QCOMPARE(where(), withError);
    }

    void yamlTabStartsFromACommentedTemplate()
    {
        SubmitDialog d;
        auto* yaml = child<QPlainTextEdit>(d, "yamlEdit");
        const QString text = yaml->toPlainText();
        QVERIFY2(text.startsWith(u'#'), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("\n# resources:")));
        QCOMPARE(text, SubmitDialog::specTemplate());
        // It is a valid spec as it stands: the YAML tab's Submit works on it.
        d.setMode(SubmitDialog::Mode::Yaml);
        const auto spec = d.validate();
        QVERIFY2(spec, qPrintable(d.errorText()));
        QCOMPARE(spec->name, QStringLiteral("my-run"));
        QCOMPARE(spec->argv,
                (QStringList{QStringLiteral("python3"), QStringLiteral("train.py"), QStringLiteral("--lr"),
                        QStringLiteral("0.001")}));
    }

    void yamlModeShowsErrorWithLineAndColumn()
    {
        QTemporaryDir dir;
        SubmitDialog d;
        const QString origin = dir.filePath(QStringLiteral("job.yaml"));
        d.setSpecText(
                QStringLiteral("name: x\ncommand: [python3, t.py]\nworkdir: .\ncomand: oops\n"), origin, dir.path());
        QVERIFY(d.mode() == SubmitDialog::Mode::Yaml);
        QVERIFY(!okButton(d)->isEnabled());
        QVERIFY2(d.errorText().startsWith(origin + QStringLiteral(":4:1:")), qPrintable(d.errorText()));
        QVERIFY(d.errorText().contains(QStringLiteral("comand")));
        QCOMPARE(child<QPlainTextEdit>(d, "yamlEdit")->extraSelections().size(), 1);
        QCOMPARE(child<QPlainTextEdit>(d, "yamlEdit")->extraSelections().first().cursor.blockNumber(), 3);
        // Fix it in place: Submit becomes possible.
        child<QPlainTextEdit>(d, "yamlEdit")
                ->setPlainText(QStringLiteral("name: x\ncommand: [python3, t.py]\nworkdir: .\n"));
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
