// ConsoleWatch (app/agent/ConsoleWatch.h): the agent's loop is woken when a
// followed console grows, not only at its 20 ms tick (#27), and watches go
// away with their tails (and with deleted files) without leaking.
#include "app/agent/ConsoleWatch.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

using namespace ty::agent;

namespace {

// Appends to `path` as the supervisor does (pwrite at the end).
void append(const QString& path, const QByteArray& bytes)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    QVERIFY(fd >= 0);
    const off_t end = ::lseek(fd, 0, SEEK_END);
    QCOMPARE(::pwrite(fd, bytes.constData(), size_t(bytes.size()), end), ssize_t(bytes.size()));
    ::close(fd);
}

// Whether the watch's descriptor is readable within `ms`.
bool readable(const ConsoleWatch& w, int ms)
{
    pollfd p{w.fd(), POLLIN, 0};
    return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

} // namespace

class TestAgentConsoleWatch final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void wakesOnAWriteToAFollowedConsoleOnly()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.log"));
        const QString b = dir.filePath(QStringLiteral("b.log"));
        append(a, "");
        append(b, "");
        ConsoleWatch w;
        QVERIFY(w.fd() >= 0);
        QVERIFY(!readable(w, 0));
        QVERIFY(w.watch("r1", QFile::encodeName(a).toStdString()));
        QCOMPARE(w.watchedFiles(), std::size_t(1));

        append(b, "not followed\n");
        QVERIFY(!readable(w, 50));
        append(a, "epoch=1 loss=0.5\n");
        QVERIFY(readable(w, 1000));
        QVERIFY(w.drain());
        QVERIFY(!readable(w, 0)); // drained
        QVERIFY(!w.drain());

        // Many writes before the loop looks: one drain takes them all.
        for (int i = 0; i < 1000; ++i)
            append(a, "x\n");
        QVERIFY(readable(w, 1000));
        QVERIFY(w.drain());
        QVERIFY(!readable(w, 0));

        w.unwatch("r1");
        QCOMPARE(w.watchedFiles(), std::size_t(0));
        w.drain(); // the removal's own IN_IGNORED
        append(a, "after the tail closed\n");
        QVERIFY(!readable(w, 50));
        w.unwatch("r1"); // twice: nothing
    }

    void oneFileWatchedByTwoKeysStaysWatchedUntilBothAreGone()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.log"));
        append(a, "");
        ConsoleWatch w;
        const std::string path = QFile::encodeName(a).toStdString();
        QVERIFY(w.watch("r1", path));
        QVERIFY(w.watch("r2", path)); // the kernel gives the same descriptor
        QCOMPARE(w.watchedFiles(), std::size_t(1));
        w.unwatch("r1");
        append(a, "still followed by r2\n");
        QVERIFY(readable(w, 1000));
        QVERIFY(w.drain());
        w.unwatch("r2");
        w.drain(); // the removal's own IN_IGNORED
        append(a, "followed by nobody\n");
        QVERIFY(!readable(w, 50));

        // watch() again for the same key replaces, not adds.
        QVERIFY(w.watch("r1", path));
        QVERIFY(w.watch("r1", path));
        w.unwatch("r1");
        QCOMPARE(w.watchedFiles(), std::size_t(0));
    }

    void aDeletedConsoleIsForgottenAndAMissingOneIsRefused()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.log"));
        append(a, "");
        ConsoleWatch w;
        QVERIFY(w.watch("r1", QFile::encodeName(a).toStdString()));
        QVERIFY(QFile::remove(a));
        QVERIFY(readable(w, 1000)); // IN_ATTRIB/IN_IGNORED
        w.drain();
        QCOMPARE(w.watchedFiles(), std::size_t(0));
        w.unwatch("r1"); // already gone: nothing
        QVERIFY(!w.watch("r2", QFile::encodeName(dir.filePath(QStringLiteral("missing.log"))).toStdString()));
        QCOMPARE(w.watchedFiles(), std::size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestAgentConsoleWatch)
#include "TestAgentConsoleWatch.moc"
