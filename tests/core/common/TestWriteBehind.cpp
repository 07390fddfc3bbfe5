// WriteBehind against a real file and the kernel's page cache: what it drops
// is checked with mincore(2), so a call that does nothing fails the test.
#include "core/common/WriteBehind.h"

#include "tests/support/TestSupport.h"

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <vector>

using namespace ty;
using ty::test::residentBytes;

namespace {

constexpr qint64 kMiB = 1024 * 1024;
constexpr qint64 kWindow = 4 * kMiB;
// The page cache keeps a file in folios of up to 2 MiB (a PMD on x86-64) and
// drops only folios wholly inside the range asked for: at each edge of a
// dropped range up to this much may stay.
constexpr qint64 kFolioSlack = 2 * kMiB;

QByteArray pattern(qint64 offset, qint64 n)
{
    QByteArray b(n, Qt::Uninitialized);
    for (qint64 i = 0; i < n; ++i)
        b[i] = char('a' + (offset + i) % 23);
    return b;
}

} // namespace

class TestWriteBehind final : public QObject {
    Q_OBJECT

    // Disk-backed (tmpfs pages cannot be dropped): next to the test binary.
    QTemporaryDir m_dir{QCoreApplication::applicationDirPath() + QStringLiteral("/wb-XXXXXX")};

    // A file of `size` bytes written, on disk (clean) and read into the cache.
    int cleanResidentFile(const QString& name, qint64 size)
    {
        const QByteArray path = m_dir.filePath(name).toLocal8Bit();
        const int fd = ::open(path.constData(), O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            return -1;
        const QByteArray data = pattern(0, size);
        if (::write(fd, data.constData(), size_t(size)) != size || ::fdatasync(fd) != 0) {
            ::close(fd);
            return -1;
        }
        std::vector<char> sink(static_cast<size_t>(size));
        if (::pread(fd, sink.data(), sink.size(), 0) != size) {
            ::close(fd);
            return -1;
        }
        return fd;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        if (test::onTmpfs(m_dir.path()))
            QSKIP("the build directory is on tmpfs, whose pages posix_fadvise cannot drop");
    }

    void dropLeavesTheLastWindowCached()
    {
        const qint64 size = 6 * kWindow;
        const int fd = cleanResidentFile(QStringLiteral("drop.log"), size);
        QVERIFY(fd >= 0);
        QCOMPARE(residentBytes(fd, size, 0, size), size);

        WriteBehind reader(WriteBehind::Drop, kWindow);
        reader.reset(0);
        reader.advance(fd, kWindow / 2); // less than a window: nothing
        QCOMPARE(reader.droppedTo(), qint64(0));
        QCOMPARE(residentBytes(fd, size, 0, size), size);

        reader.advance(fd, size); // read to the end: all but the last window goes
        QCOMPARE(reader.droppedTo(), 5 * kWindow);
        QCOMPARE(reader.flushedTo(), qint64(0)); // Drop alone starts no writeback
        QCOMPARE(residentBytes(fd, size, 0, 5 * kWindow - kFolioSlack), qint64(0));
        QCOMPARE(residentBytes(fd, size, 5 * kWindow, size), kWindow);

        // Dropped from the cache, not from the file.
        std::vector<char> back(static_cast<size_t>(size));
        QCOMPARE(::pread(fd, back.data(), back.size(), 0), ssize_t(size));
        QCOMPARE(QByteArray(back.data(), size), pattern(0, size));
        ::close(fd);
    }

    void resetLeavesEarlierBytesAlone()
    {
        const qint64 size = 6 * kWindow;
        const int fd = cleanResidentFile(QStringLiteral("resumed.log"), size);
        QVERIFY(fd >= 0);
        WriteBehind reader(WriteBehind::Drop, kWindow);
        reader.reset(2 * kWindow); // a tail that started there
        reader.advance(fd, size);
        QCOMPARE(reader.droppedTo(), 5 * kWindow);
        QCOMPARE(residentBytes(fd, size, 0, 2 * kWindow), 2 * kWindow);
        QCOMPARE(residentBytes(fd, size, 2 * kWindow + kFolioSlack, 5 * kWindow - kFolioSlack), qint64(0));
        QCOMPARE(residentBytes(fd, size, 5 * kWindow, size), kWindow);
        ::close(fd);
    }

    // The supervisor's use (Flush | Drop | Wait): appends in 256 KiB pieces.
    // Writeback is started a window behind the end and the cache dropped two
    // windows behind, in whole windows; the newest two windows stay cached,
    // and the file holds every byte.
    void flushAndDropWhileAppending()
    {
        const QByteArray path = m_dir.filePath(QStringLiteral("console.log")).toLocal8Bit();
        const int fd = ::open(path.constData(), O_RDWR | O_CREAT | O_TRUNC, 0644);
        QVERIFY(fd >= 0);
        WriteBehind writer(WriteBehind::Flush | WriteBehind::Drop | WriteBehind::Wait, kWindow);
        writer.reset(0);
        const qint64 piece = 256 * 1024;
        const qint64 size = 8 * kWindow + 3 * piece;
        QList<qint64> flushSteps;
        for (qint64 off = 0; off < size; off += piece) {
            const QByteArray data = pattern(off, piece);
            QCOMPARE(::pwrite(fd, data.constData(), size_t(piece), off), ssize_t(piece));
            const qint64 before = writer.flushedTo();
            writer.advance(fd, off + piece);
            if (writer.flushedTo() != before)
                flushSteps.append(writer.flushedTo());
            QVERIFY(writer.flushedTo() <= off + piece - kWindow || writer.flushedTo() == 0);
            QVERIFY(writer.droppedTo() <= writer.flushedTo() - kWindow || writer.droppedTo() == 0);
        }
        QList<qint64> expected;
        for (qint64 w = 1; w <= 7; ++w)
            expected.append(w * kWindow);
        QCOMPARE(flushSteps, expected);
        QCOMPARE(writer.flushedTo(), 7 * kWindow);
        QCOMPARE(writer.droppedTo(), 6 * kWindow);
        // The newest bytes, past both marks, were never asked to leave.
        QCOMPARE(residentBytes(fd, size, 7 * kWindow, size), size - 7 * kWindow);
        // Everything asked to leave has left, with no fdatasync of ours: the
        // writer waited for each window's writeback before dropping it, so
        // no dirty page was skipped (however slow the disk was meanwhile).
        QCOMPARE(residentBytes(fd, size, 0, 6 * kWindow - kFolioSlack), qint64(0));
        // The next window goes with the next call (it repeats the window before).
        writer.advance(fd, size + kWindow);
        QCOMPARE(writer.droppedTo(), 7 * kWindow);
        QCOMPARE(residentBytes(fd, size, 5 * kWindow + kFolioSlack, 7 * kWindow - kFolioSlack), qint64(0));
        std::vector<char> back(static_cast<size_t>(size));
        QCOMPARE(::pread(fd, back.data(), back.size(), 0), ssize_t(size));
        QCOMPARE(QByteArray(back.data(), size), pattern(0, size));
        ::close(fd);
    }

    // The local copy's use (Flush | Drop, on the engine's thread): nothing
    // waits, so pages still being written back when their drop came stay;
    // once they are on disk, the next call's repeat of the window before
    // takes them.
    void flushAndDropWithoutWaiting()
    {
        const QByteArray path = m_dir.filePath(QStringLiteral("copy.log")).toLocal8Bit();
        const int fd = ::open(path.constData(), O_RDWR | O_CREAT | O_TRUNC, 0644);
        QVERIFY(fd >= 0);
        WriteBehind writer(WriteBehind::Flush | WriteBehind::Drop, kWindow);
        writer.reset(0);
        const qint64 size = 4 * kWindow;
        const QByteArray data = pattern(0, size);
        QCOMPARE(::pwrite(fd, data.constData(), size_t(size), 0), ssize_t(size));
        writer.advance(fd, size);
        QCOMPARE(writer.flushedTo(), 3 * kWindow);
        QCOMPARE(writer.droppedTo(), 2 * kWindow);
        QCOMPARE(::fdatasync(fd), 0);
        writer.advance(fd, size + kWindow);
        QCOMPARE(writer.droppedTo(), 3 * kWindow);
        QCOMPARE(residentBytes(fd, size, kWindow + kFolioSlack, 3 * kWindow - kFolioSlack), qint64(0));
        QCOMPARE(residentBytes(fd, size, 3 * kWindow, size), kWindow);
        ::close(fd);
    }
};

QTEST_GUILESS_MAIN(TestWriteBehind)
#include "TestWriteBehind.moc"
