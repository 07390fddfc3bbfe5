// The agent's OutputQueue (app/agent/Framing.h): frames whose payload stays
// in a file until sendfile(2) moves it, against frames of bytes, through
// real pipes, a socket pair and a file, with partial writes and a file that
// lost its bytes.
#include "app/agent/Framing.h"

#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <string>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace ty::agent;

namespace {

std::string pattern(std::size_t n)
{
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = char((i * 131 + i / 7) & 0xFF); // every byte value, '\n' included
    return s;
}

// Everything readable from `fd` now (non-blocking).
std::string drain(int fd, std::size_t max = std::string::npos)
{
    std::string out;
    char buf[65536];
    while (out.size() < max) {
        const ssize_t r = ::read(fd, buf, std::min(sizeof buf, max - out.size()));
        if (r <= 0)
            break;
        out.append(buf, std::size_t(r));
    }
    return out;
}

} // namespace

class TestAgentOutputQueue final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_content = pattern(3 * 1024 * 1024 + 17);

    // A console file holding m_content, opened read-only.
    std::shared_ptr<const SharedFd> console(const char* name)
    {
        const QByteArray path = QFile::encodeName(m_dir.filePath(QString::fromLatin1(name)));
        const int w = ::open(path.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (w < 0 || ::write(w, m_content.data(), m_content.size()) != ssize_t(m_content.size()))
            return nullptr;
        ::close(w);
        const int fd = ::open(path.constData(), O_RDONLY);
        return fd < 0 ? nullptr : std::make_shared<const SharedFd>(fd);
    }

    // The same frames twice: payloads from the file, and as bytes.
    static void queueFrames(
            OutputQueue& q, const std::shared_ptr<const SharedFd>& file, const std::string& content, bool fromFile)
    {
        struct Piece {
            std::int64_t offset;
            std::size_t length;
        };
        const Piece pieces[]
                = {{0, 1}, {1, 262144}, {262145, 1000000}, {1262145, 17}, {1262162, 1883583}}; // to the end
        q.pushMessage(Json{{"type", "hello"}});
        for (const Piece& p : pieces) {
            Json header{{"type", "output"}, {"run", "r1"}, {"offset", p.offset}};
            if (fromFile)
                q.pushFileFrame(header, file, p.offset, p.length);
            else
                q.pushFrame(header, content.substr(std::size_t(p.offset), p.length));
            q.pushMessage(Json{{"type", "exited"}, {"run", "r0"}});
        }
    }

    // Flushes `q` into `writeFd` while reading `readFd`, `step` bytes at a time.
    static std::string pump(OutputQueue& q, int writeFd, int readFd, std::size_t step)
    {
        std::string got;
        for (int guard = 0; guard < 100000; ++guard) {
            if (!q.flush(writeFd))
                return "flush failed: " + std::to_string(errno);
            got += drain(readFd, step);
            if (q.empty() && q.bytes() == 0) {
                got += drain(readFd);
                return got;
            }
        }
        return "no progress";
    }

    std::string expected()
    {
        OutputQueue bytes;
        queueFrames(bytes, nullptr, m_content, false);
        int fds[2];
        if (::pipe2(fds, O_NONBLOCK) != 0)
            return {};
        std::string out = pump(bytes, fds[1], fds[0], std::string::npos);
        ::close(fds[0]);
        ::close(fds[1]);
        return out;
    }

    // The file frames of a new console `name`, flushed into `writeFd` and read
    // from `readFd` `step` bytes at a time; both are closed after. `queued`:
    // the queue's byte count before the flush.
    std::string fileFramesThrough(const char* name, int writeFd, int readFd, std::size_t step, std::size_t* queued)
    {
        std::string got = std::string("cannot create ") + name;
        if (auto file = console(name)) {
            OutputQueue q;
            queueFrames(q, file, m_content, true);
            *queued = q.bytes();
            got = pump(q, writeFd, readFd, step);
        }
        ::close(writeFd);
        ::close(readFd);
        return got;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void fileFramesEqualByteFramesThroughAPipe()
    {
        const std::string want = expected();
        QVERIFY(want.size() > m_content.size());
        for (const std::size_t step : {std::string::npos, std::size_t(4096), std::size_t(1000)}) {
            int fds[2];
            QCOMPARE(::pipe2(fds, O_NONBLOCK), 0);
            ::fcntl(fds[1], F_SETPIPE_SZ, 4096); // many partial writes, mid-chunk
            std::size_t queued = 0;
            const std::string got = fileFramesThrough("a.log", fds[1], fds[0], step, &queued);
            QCOMPARE(queued, want.size());
            QCOMPARE(got.size(), want.size());
            QVERIFY(got == want);
        }
    }

    void fileFramesThroughASocketPair()
    {
        const std::string want = expected();
        int sv[2];
        QCOMPARE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
        std::size_t queued = 0;
        const std::string got = fileFramesThrough("b.log", sv[0], sv[1], 65536, &queued);
        QCOMPARE(queued, want.size());
        QCOMPARE(got.size(), want.size());
        QVERIFY(got == want);
    }

    // sendfile() refuses an O_APPEND destination (EINVAL): the bytes are read
    // and written instead, from where the refused chunk stood.
    void refusedSendfileFallsBackToReading()
    {
        const std::string want = expected();
        auto file = console("c.log");
        QVERIFY(file);
        OutputQueue q;
        queueFrames(q, file, m_content, true);
        const QByteArray outPath = QFile::encodeName(m_dir.filePath(QStringLiteral("out.bin")));
        const int out = ::open(outPath.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        QVERIFY(out >= 0);
        QVERIFY(q.flush(out));
        QVERIFY(q.empty());
        QCOMPARE(q.bytes(), std::size_t(0));
        ::close(out);
        QFile f(QString::fromLocal8Bit(outPath));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray got = f.readAll();
        QCOMPARE(std::size_t(got.size()), want.size());
        QVERIFY(std::string(got.constData(), std::size_t(got.size())) == want);
    }

    // The fallback starts where the refused chunk stood, also in its middle
    // (part of it already went out by sendfile to another fd).
    void fallbackResumesMidChunk()
    {
        auto file = console("f.log");
        QVERIFY(file);
        OutputQueue q;
        q.pushFileFrame(Json{{"type", "output"}}, file, 1000, 300000);
        int fds[2];
        QCOMPARE(::pipe2(fds, O_NONBLOCK), 0);
        QVERIFY(q.flush(fds[1])); // the header and part of the payload (a pipe holds 64 KiB)
        std::string got = drain(fds[0]);
        ::close(fds[0]);
        ::close(fds[1]);
        const std::string header = "{\"len\":300000,\"type\":\"output\"}\n";
        QVERIFY(got.size() > header.size() && got.size() < header.size() + 300000);
        const QByteArray outPath = QFile::encodeName(m_dir.filePath(QStringLiteral("out2.bin")));
        const int out = ::open(outPath.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        QVERIFY(out >= 0);
        QVERIFY(q.flush(out)); // sendfile: EINVAL; the rest read and written
        ::close(out);
        QVERIFY(q.empty());
        QFile f(QString::fromLocal8Bit(outPath));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray rest = f.readAll();
        got.append(rest.constData(), std::size_t(rest.size()));
        QCOMPARE(got.size(), header.size() + 300000);
        QVERIFY(got == header + m_content.substr(1000, 300000));
    }

    // A file that no longer holds what its frame announced cannot be sent
    // without breaking the framing: flush() fails with EIO after sending what
    // there was, instead of sending a short frame.
    void truncatedFileIsAnError()
    {
        auto file = console("d.log");
        QVERIFY(file);
        OutputQueue q;
        q.pushFileFrame(Json{{"type", "output"}}, file, 0, 100000);
        const QByteArray path = QFile::encodeName(m_dir.filePath(QStringLiteral("d.log")));
        QCOMPARE(::truncate(path.constData(), 50000), 0);
        int fds[2];
        QCOMPARE(::pipe2(fds, O_NONBLOCK), 0);
        ::fcntl(fds[1], F_SETPIPE_SZ, 1024 * 1024);
        errno = 0;
        QVERIFY(!q.flush(fds[1]));
        QCOMPARE(errno, EIO);
        const std::string got = drain(fds[0]);
        const std::string header = "{\"len\":100000,\"type\":\"output\"}\n";
        QCOMPARE(got.size(), header.size() + 50000);
        QVERIFY(got.substr(0, header.size()) == header);
        QVERIFY(got.substr(header.size()) == m_content.substr(0, 50000));
        ::close(fds[0]);
        ::close(fds[1]);
    }

    // The tail may close (untail, a new tail) while its frames wait: the
    // queue keeps the file open until their bytes are out, then closes it.
    void fileStaysOpenUntilItsFramesAreSent()
    {
        auto file = console("e.log");
        QVERIFY(file);
        const int fd = file->get();
        OutputQueue q;
        q.pushFileFrame(Json{{"type", "output"}}, file, 0, 300000);
        file.reset(); // the tail is gone
        QVERIFY(::fcntl(fd, F_GETFD) >= 0);
        int fds[2];
        QCOMPARE(::pipe2(fds, O_NONBLOCK), 0);
        std::string got;
        while (!q.empty()) {
            QVERIFY(q.flush(fds[1]));
            got += drain(fds[0]);
        }
        QVERIFY(got.size() > 300000);
        QVERIFY(got.substr(got.size() - 300000) == m_content.substr(0, 300000));
        errno = 0;
        QCOMPARE(::fcntl(fd, F_GETFD), -1); // closed with the last frame
        QCOMPARE(errno, EBADF);
        ::close(fds[0]);
        ::close(fds[1]);
    }
};

QTEST_GUILESS_MAIN(TestAgentOutputQueue)
#include "TestAgentOutputQueue.moc"
