// Remembered SSH key passphrases: a real Secret Service (gnome-keyring in a
// private D-Bus session, started by tests/ui/with-keyring.sh), the real
// PassphraseDialog answered as a user would, and a search of every file under
// HOME for the passphrase in plain text.
#include "ui/dialogs/Keychain.h"
#include "ui/dialogs/PassphraseDialog.h"
#include "tests/support/DialogAnswerer.h"

#include <QApplication>
#include <QCheckBox>
#include <QDialog>
#include <QDirIterator>
#include <QFile>
#include <QLineEdit>
#include <QTimer>
#include <QUuid>
#include <QtTest>

using namespace ty;

namespace {

// Answers the next PassphraseDialog that opens: types `text`, ticks
// "remember" as asked, accepts. Counts the dialogs it answered.
struct DialogAnswerer : test::DialogAnswerer<PassphraseDialog> {
    QByteArray text;
    bool remember = false;

    DialogAnswerer()
    {
        answer = [this](PassphraseDialog& dialog) {
            dialog.findChild<QLineEdit*>(QStringLiteral("passphraseEdit"))->setText(QString::fromUtf8(text));
            dialog.findChild<QCheckBox*>(QStringLiteral("rememberPassphrase"))->setChecked(remember);
            dialog.accept();
        };
    }
};

// Every regular file under `dir` that contains `needle`.
QStringList filesContaining(const QString& dir, const QByteArray& needle)
{
    QStringList hits;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle))
            hits << f.fileName();
    }
    return hits;
}

} // namespace

class TestPassphraseKeychain : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"))
            QFAIL("no D-Bus session: run this test through tests/ui/with-keyring.sh (ctest does)");
        QVERIFY2(QDir::homePath().startsWith(QStringLiteral("/tmp/ty-keyring-")),
                qPrintable(QStringLiteral("HOME is %1, not with-keyring.sh's throw-away one").arg(QDir::homePath())));
    }

    void roundTrip()
    {
        const QString key = QStringLiteral("test-entry-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
        auto missing = Keychain::read(key);
        QVERIFY(!missing);
        QVERIFY2(missing.error().message.startsWith(QStringLiteral("no entry")), qPrintable(missing.error().message));

        const QByteArray secret = "s3cret with spaces and \xc3\xa9";
        auto written = Keychain::write(key, secret);
        QVERIFY2(written, written ? "" : qPrintable(written.error().message));
        auto read = Keychain::read(key);
        QVERIFY2(read, read ? "" : qPrintable(read.error().message));
        QCOMPARE(*read, secret);

        QVERIFY(Keychain::remove(key));
        QVERIFY(!Keychain::read(key));
        QVERIFY(Keychain::remove(key)); // removing a missing entry is fine
    }

    void rememberedPassphraseIsUsedAndNeverInPlainText()
    {
        const QString node = QStringLiteral("ws-") + QUuid::createUuid().toString(QUuid::Id128).left(8);
        const QString prompt = QStringLiteral("Passphrase for private key:");
        const QByteArray passphrase = "pp-" + QUuid::createUuid().toByteArray(QUuid::Id128);

        DialogAnswerer answerer;
        answerer.text = passphrase;
        answerer.remember = true;
        {
            GuiPassphraseProvider provider(nullptr);
            const auto answer = provider.passphrase(node, prompt);
            QVERIFY(answer);
            QCOMPARE(*answer, passphrase);
            QCOMPARE(answerer.answered, 1);
            QVERIFY2(provider.lastKeychainError().isEmpty(), qPrintable(provider.lastKeychainError()));
        }
        auto stored = Keychain::read(Keychain::passphraseKey(node, prompt));
        QVERIFY(stored);
        QCOMPARE(*stored, passphrase);

        // A later session (a new provider) gets it from the keychain, no dialog.
        GuiPassphraseProvider later(nullptr);
        const auto again = later.passphrase(node, prompt);
        QVERIFY(again);
        QCOMPARE(*again, passphrase);
        QCOMPARE(answerer.answered, 1);

        // Nothing under HOME (keyrings, settings, caches) holds it in plain text.
        QCOMPARE(filesContaining(QDir::homePath(), passphrase), QStringList());

        // Asked again right away: the remembered one did not open the key.
        // It is forgotten and the user is asked; not ticking "remember"
        // leaves the keychain without it.
        answerer.text = "the-new-one";
        answerer.remember = false;
        const auto corrected = later.passphrase(node, prompt);
        QVERIFY(corrected);
        QCOMPARE(*corrected, QByteArray("the-new-one"));
        QCOMPARE(answerer.answered, 2);
        QVERIFY(!Keychain::read(Keychain::passphraseKey(node, prompt)));
    }

    void cancelledDialogGivesNothing()
    {
        GuiPassphraseProvider provider(nullptr);
        QTimer::singleShot(50, [] {
            for (QWidget* w : QApplication::topLevelWidgets())
                if (auto* d = qobject_cast<PassphraseDialog*>(w))
                    d->reject();
        });
        QVERIFY(!provider.passphrase(QStringLiteral("ws-cancel"), QStringLiteral("Passphrase:")));
        QVERIFY(!Keychain::read(Keychain::passphraseKey(QStringLiteral("ws-cancel"), QStringLiteral("Passphrase:"))));
    }
};

QTEST_MAIN(TestPassphraseKeychain)
#include "TestPassphraseKeychain.moc"
