// The GUI's keyboard-interactive questions (issue #26: one-time codes):
// LoginQuestionsDialog shows the server's name, instruction and prompts as
// plain text, one field per prompt (password mode where the server says the
// answer must not be shown), and GuiPassphraseProvider::answers() asks it on
// the GUI thread for an SSH session's thread, answered as a user would.
#include "ui/dialogs/LoginQuestionsDialog.h"
#include "ui/dialogs/PassphraseDialog.h"
#include "tests/support/DialogAnswerer.h"

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QThread>
#include <QTimer>
#include <QtTest>

#include <atomic>

using namespace ty;

namespace {

const SshLoginQuestions kQuestions{QStringLiteral("<b>Duo</b> two-factor"),
        QStringLiteral("A code was sent to your phone.\nType it below."),
        {SshLoginPrompt{QStringLiteral("Passcode: "), false}, SshLoginPrompt{QStringLiteral("Account: "), true}}};

// Answers the next LoginQuestionsDialog that opens: types `typed` into its
// fields in order and accepts (or cancels). Counts the dialogs it answered.
struct DialogAnswerer : test::DialogAnswerer<LoginQuestionsDialog> {
    QStringList typed;
    bool cancel = false;

    DialogAnswerer()
    {
        answer = [this](LoginQuestionsDialog& dialog) {
            for (qsizetype i = 0; i < typed.size(); ++i)
                dialog.findChild<QLineEdit*>(QStringLiteral("loginAnswer%1").arg(i))->setText(typed.at(i));
            cancel ? dialog.reject() : dialog.accept();
        };
    }
};

} // namespace

class TestLoginQuestionsDialog final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void showsTheServersQuestionsAsPlainText()
    {
        LoginQuestionsDialog dialog(QStringLiteral("hpc"), kQuestions);
        auto* name = dialog.findChild<QLabel*>(QStringLiteral("loginName"));
        auto* instruction = dialog.findChild<QLabel*>(QStringLiteral("loginInstruction"));
        QVERIFY(name && instruction);
        QCOMPARE(name->text(), QStringLiteral("<b>Duo</b> two-factor")); // shown as typed, never as markup
        QCOMPARE(name->textFormat(), Qt::PlainText);
        QCOMPARE(instruction->text(), QStringLiteral("A code was sent to your phone.\nType it below."));
        QCOMPARE(instruction->textFormat(), Qt::PlainText);
        auto* code = dialog.findChild<QLineEdit*>(QStringLiteral("loginAnswer0"));
        auto* account = dialog.findChild<QLineEdit*>(QStringLiteral("loginAnswer1"));
        QVERIFY(code && account);
        QCOMPARE(code->echoMode(), QLineEdit::Password);
        QCOMPARE(account->echoMode(), QLineEdit::Normal);
        QCOMPARE(code->accessibleName(), QStringLiteral("Passcode"));
        QCOMPARE(qobject_cast<QLabel*>(dialog.findChildren<QLabel*>().value(0))->textFormat(), Qt::PlainText);
        QVERIFY(dialog.windowTitle().contains(QStringLiteral("hpc")));
        // No name or instruction: no empty lines for them.
        LoginQuestionsDialog bare(QStringLiteral("hpc"), {{}, {}, {SshLoginPrompt{QStringLiteral("Code:"), false}}});
        QVERIFY(!bare.findChild<QLabel*>(QStringLiteral("loginName")));
        QVERIFY(!bare.findChild<QLabel*>(QStringLiteral("loginInstruction")));
    }

    void askGivesTheAnswersInOrder()
    {
        DialogAnswerer user;
        user.typed = {QStringLiteral("493817"), QStringLiteral("alice")};
        const auto answers = LoginQuestionsDialog::ask(nullptr, QStringLiteral("hpc"), kQuestions);
        QCOMPARE(user.answered, 1);
        QVERIFY(answers);
        QCOMPARE(*answers, (QList<QByteArray>{"493817", "alice"}));
        user.cancel = true;
        QVERIFY(!LoginQuestionsDialog::ask(nullptr, QStringLiteral("hpc"), kQuestions));
        QCOMPARE(user.answered, 2);
    }

    // An SSH session's thread asks; the dialog opens on the GUI thread and
    // the session's thread waits for it. Once per call.
    void providerAsksOnTheGuiThread()
    {
        GuiPassphraseProvider provider(nullptr);
        DialogAnswerer user;
        user.typed = {QStringLiteral("123456"), QStringLiteral("bob")};
        std::optional<QList<QByteArray>> answers;
        std::atomic<bool> done = false;
        QThread* ssh = QThread::create([&] {
            answers = provider.answers(QStringLiteral("hpc"), kQuestions);
            done = true;
        });
        ssh->start();
        QTRY_VERIFY_WITH_TIMEOUT(done.load(), 10000);
        ssh->wait();
        delete ssh;
        QCOMPARE(user.answered, 1);
        QVERIFY(answers);
        QCOMPARE(*answers, (QList<QByteArray>{"123456", "bob"}));
    }
};

QTEST_MAIN(TestLoginQuestionsDialog)
#include "TestLoginQuestionsDialog.moc"
