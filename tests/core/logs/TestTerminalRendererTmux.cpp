// The oracle for TerminalRenderer is a real terminal: every case below is
// `cat`-ed into a private tmux server's pane of the same width and height and
// `capture-pane -p -S - -E -` must equal the renderer's rows (trailing blanks
// and trailing empty rows stripped on both sides).
//
// Known tmux differences, handled explicitly here:
// - A line feed ends an unterminated DCS/OSC/APC/SOS/PM string in the
//   renderer; tmux keeps swallowing until ST (or its 5 s timer). Those cases
//   (strayIntroducers) compare against tmux fed the same bytes with an ST
//   (ESC \) put before that line feed, and check that tmux itself, fed the
//   bytes as they are, shows none of the lines after it.
// - tmux 3.3a silently drops invalid UTF-8 bytes; the renderer shows U+FFFD
//   (what the issue asks for and what xterm/VTE do). Those cases compare with
//   the U+FFFD removed from the renderer's side and are laid out so that no
//   column position after a replacement character matters.
#include "tests/support/TestSupport.h"
#include "core/logs/TerminalRenderer.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <cctype>

using namespace ty;

namespace {

QStringList normalise(QStringList lines)
{
    for (QString& l : lines) {
        qsizetype n = l.size();
        while (n > 0 && l.at(n - 1) == u' ')
            --n;
        l.truncate(n);
    }
    while (!lines.isEmpty() && lines.constLast().isEmpty())
        lines.removeLast();
    return lines;
}

struct Rendered {
    QStringList rows;
    QStringList joined; // wrapped rows joined, like capture-pane -J
    // capture-pane -J of the history alone and of the screen alone (the
    // random streams): what joins across the two is left out (see randomStream())
    QStringList joinedHistory;
    QStringList joinedScreen;
    qint64 committedWrapsKept = 0; // the renderer's (see TerminalRenderer::committedWrapsKept())
};

QStringList joinWrapped(const QList<ConsoleLine>& lines)
{
    QStringList out;
    QString acc;
    for (const ConsoleLine& l : lines) {
        acc += l.text;
        if (!l.wrapped) {
            out.append(acc);
            acc.clear();
        }
    }
    if (!acc.isEmpty())
        out.append(acc);
    return normalise(out);
}

Rendered renderBytes(const QByteArray& bytes, int width, int height, quint32 seed)
{
    TerminalRenderer r(width, 16384, height);
    QList<ConsoleLine> lines;
    // Feed in random chunks (1..300 bytes) to exercise split sequences.
    QRandomGenerator rng(seed);
    qsizetype pos = 0;
    while (pos < bytes.size()) {
        const qsizetype n = std::min<qsizetype>(bytes.size() - pos, 1 + rng.bounded(300));
        r.feed(QByteArrayView(bytes).sliced(pos, n));
        pos += n;
        if (rng.bounded(4) == 0)
            lines += r.takeCommitted();
    }
    r.finish();
    lines += r.takeCommitted();
    Rendered out;
    QString acc;
    for (const ConsoleLine& l : lines) {
        out.rows.append(l.text);
        acc += l.text;
        if (!l.wrapped) {
            out.joined.append(acc);
            acc.clear();
        }
    }
    if (!acc.isEmpty())
        out.joined.append(acc);
    out.rows = normalise(out.rows);
    out.joined = normalise(out.joined);
    return out;
}

// The rows tmux's capture-pane shows while the stream is still open (history
// and screen, the alternate screen if that is shown): the committed rows and
// pendingLines(), without finish().
Rendered renderLive(const QByteArray& bytes, int width, int height, quint32 seed)
{
    TerminalRenderer r(width, 16384, height);
    QRandomGenerator rng(seed);
    for (qsizetype pos = 0; pos < bytes.size();) {
        const qsizetype n = std::min<qsizetype>(bytes.size() - pos, 1 + rng.bounded(40));
        r.feed(QByteArrayView(bytes).sliced(pos, n));
        pos += n;
    }
    const QList<ConsoleLine> history = r.takeCommitted();
    const QList<ConsoleLine> screen = r.pendingLines();
    Rendered out;
    for (const QList<ConsoleLine>* part : {&history, &screen}) {
        for (const ConsoleLine& l : *part)
            out.rows.append(l.text);
    }
    out.rows = normalise(out.rows);
    out.joinedHistory = joinWrapped(history);
    out.joinedScreen = joinWrapped(screen);
    out.committedWrapsKept = r.committedWrapsKept();
    return out;
}

// A stream as a C string literal, for a failure message.
QString escaped(const QByteArray& bytes)
{
    QString out;
    for (qsizetype i = 0; i < bytes.size(); ++i) {
        const auto c = static_cast<unsigned char>(bytes.at(i));
        if (c == '\\' || c == '"') {
            out += u'\\';
            out += QChar(c);
        } else if (c == '\n')
            out += QStringLiteral("\\n");
        else if (c == '\r')
            out += QStringLiteral("\\r");
        else if (c == '\t')
            out += QStringLiteral("\\t");
        else if (c >= 0x20 && c < 0x7F)
            out += QChar(c);
        else {
            out += QStringLiteral("\\x%1").arg(c, 2, 16, QChar(u'0'));
            if (i + 1 < bytes.size() && std::isxdigit(static_cast<unsigned char>(bytes.at(i + 1))))
                out += QStringLiteral("\"\""); // the next character is not part of the escape
        }
    }
    return QStringLiteral("\"%1\"").arg(out);
}

// A random stream of what the renderer claims to render like tmux: printable
// ASCII, multi-byte characters, CR/LF/BS/TAB, cursor movement, erasing, inserting
// and deleting characters and lines, scrolling, REP, SGR, save/restore and
// the alternate screen. Left out: scroll regions (ESC[r), which the renderer
// does not support, and HPR/VPR (ESC[a, ESC[e) and ?1048, which tmux 3.3a
// ignores and the renderer does as xterm does. Wide characters too: tmux
// 3.3a does not always clear a wide character whose right half is written
// over (on a row that came in by scrolling, or back from the alternate
// screen, "\n\n\n\n\xf0\x9f\x92\xa1klmno" ESC[2` "d" at 80x4 captures as a
// 7-column "\U0001f4a1dklmno", where its own fresh rows give " dklmno"), and
// the renderer does not copy that; the generated fixtures cover them.
// Multi-byte narrow characters (é, box drawing, blocks) stand in. ICH
// (ESC[@) inserts at most one: tmux 3.3a's grid_move_cells leaves the old
// cells between the moved ones and the cursor where more than half of the
// rest of the row is inserted ("abc" ESC[50G "f" ESC[H ESC[62@ keeps the
// "f"), and inserting all of the rest leaves the row as it was; the renderer
// blanks what it inserts, as xterm does.
// The joined rows (capture-pane -J) are compared for the history and the
// screen apart, the history's only where the renderer kept no wrap mark tmux
// took off a committed row: tmux clears the wrap mark of the row above the
// rows it clears or moves (grid_clear_lines, grid_move_lines), which for the
// screen's top row is the last row of the history, one the renderer has
// handed on already. Parameters are mostly small, so the moves stay on
// a small screen and interact.
QByteArray randomStream(QRandomGenerator& rng)
{
    static const char* const kWords[] = {"a", "bc", "def", "ghij", "klmno", "0123456789", "XY", " ", "  q"};
    static const char* const kNarrow[] = {"\xc3\xa9", "\xe2\x94\x81", "\xe2\x96\x88"};
    static const char kCsi[] = {'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'd', '`', 'J', 'K', '@', 'P', 'X', 'L', 'M',
            'S', 'T', 'b', 'm', 's', 'u'};
    static const char* const kAlt[]
            = {"\x1b[?1049h", "\x1b[?1049l", "\x1b[?47h", "\x1b[?47l", "\x1b[?1047h", "\x1b[?1047l"};
    auto number = [&]() -> QByteArray {
        const quint32 k = rng.bounded(20);
        if (k < 2)
            return {}; // default
        if (k < 17)
            return QByteArray::number(rng.bounded(8));
        return QByteArray::number(rng.bounded(100));
    };
    QByteArray out;
    const int tokens = 20 + int(rng.bounded(100));
    for (int t = 0; t < tokens; ++t) {
        const quint32 kind = rng.bounded(100);
        if (kind < 30) {
            out += kWords[rng.bounded(int(std::size(kWords)))];
        } else if (kind < 38) {
            out += kNarrow[rng.bounded(int(std::size(kNarrow)))];
        } else if (kind < 48) {
            out += "\n";
        } else if (kind < 52) {
            out += "\r";
        } else if (kind < 55) {
            out += "\b";
        } else if (kind < 57) {
            out += "\t";
        } else if (kind < 86) {
            const char final = kCsi[rng.bounded(int(sizeof(kCsi)))];
            out += "\x1b[";
            if (final == 'H' && rng.bounded(2) == 0)
                out += number() + ";" + number();
            else if (final == 'm')
                out += QByteArrayList{"0", "1", "31", "4", "7", "38;5;208", "48;2;1;2;3", "39;49", ""}.at(
                        rng.bounded(9));
            else if (final == '@')
                out += QByteArrayList{"", "0", "1"}.at(rng.bounded(3)); // see above
            else if (final == 'J' || final == 'K')
                out += QByteArrayList{"", "0", "1", "2"}.at(rng.bounded(4));
            else
                out += number();
            out += final;
        } else if (kind < 94) {
            out += kAlt[rng.bounded(int(std::size(kAlt)))];
        } else {
            out += QByteArrayList{"\x1b"
                                  "7",
                    "\x1b"
                    "8",
                    "\x1b"
                    "D",
                    "\x1b"
                    "E",
                    "\x1b"
                    "M"}
                           .at(rng.bounded(5));
        }
    }
    return out;
}

class TmuxOracle {
public:
    bool available() const { return !m_tmux.isEmpty(); }

    TmuxOracle() { m_tmux = QStandardPaths::findExecutable(QStringLiteral("tmux")); }

    // Returns rows (and joined rows) as tmux shows them after `cat`-ing bytes.
    Rendered capture(const QByteArray& bytes, int width, int height)
    {
        Rendered out;
        QTemporaryDir dir;
        if (!dir.isValid())
            return out;
        const QString input = dir.filePath(QStringLiteral("input"));
        const QString conf = dir.filePath(QStringLiteral("tmux.conf"));
        const QString done = dir.filePath(QStringLiteral("done"));
        {
            QFile f(input);
            f.open(QIODevice::WriteOnly);
            f.write(bytes);
            QFile c(conf);
            c.open(QIODevice::WriteOnly);
            c.write("set -g history-limit 1000000\n");
        }
        const QString socket = QStringLiteral("ty-test-%1-%2").arg(QCoreApplication::applicationPid()).arg(++m_counter);
        const QString shellCmd = QStringLiteral("cat '%1'; touch '%2'; exec sleep 600").arg(input, done);
        run({QStringLiteral("-f"), conf, QStringLiteral("new-session"), QStringLiteral("-d"), QStringLiteral("-x"),
                    QString::number(width), QStringLiteral("-y"), QString::number(height), shellCmd},
                socket);
        QElapsedTimer t;
        t.start();
        while (!QFileInfo::exists(done) && t.elapsed() < 20000)
            QThread::msleep(20);
        // cat has exited; wait until tmux has parsed everything (capture stable).
        QByteArray prev;
        QByteArray joined;
        for (int stable = 0; stable < 2 && t.elapsed() < 30000;) {
            QThread::msleep(80);
            const QByteArray now = run({QStringLiteral("capture-pane"), QStringLiteral("-p"), QStringLiteral("-S"),
                                               QStringLiteral("-"), QStringLiteral("-E"), QStringLiteral("-")},
                    socket);
            stable = (now == prev) ? stable + 1 : 0;
            prev = now;
        }
        joined = run({QStringLiteral("capture-pane"), QStringLiteral("-p"), QStringLiteral("-J"), QStringLiteral("-S"),
                             QStringLiteral("-"), QStringLiteral("-E"), QStringLiteral("-")},
                socket);
        run({QStringLiteral("kill-server")}, socket);
        out.rows = normalise(QString::fromUtf8(prev).split(u'\n'));
        out.joined = normalise(QString::fromUtf8(joined).split(u'\n'));
        return out;
    }

    // Each stream `cat`-ed in a window of its own of one tmux server (many
    // at once: one server start for all), the rows as capture() gives them.
    QList<Rendered> captureMany(const QList<QByteArray>& streams, int width, int height)
    {
        QList<Rendered> out(streams.size());
        QTemporaryDir dir;
        if (!dir.isValid() || streams.isEmpty())
            return out;
        const QString conf = dir.filePath(QStringLiteral("tmux.conf"));
        {
            QFile c(conf);
            c.open(QIODevice::WriteOnly);
            c.write("set -g history-limit 1000000\nset -g base-index 0\nset -g default-size "
                    + QByteArray::number(width) + "x" + QByteArray::number(height) + "\n");
        }
        QStringList args{QStringLiteral("-f"), conf, QStringLiteral("new-session"), QStringLiteral("-d"),
                QStringLiteral("-x"), QString::number(width), QStringLiteral("-y"), QString::number(height)};
        for (qsizetype i = 0; i < streams.size(); ++i) {
            const QString input = dir.filePath(QStringLiteral("input%1").arg(i));
            QFile f(input);
            f.open(QIODevice::WriteOnly);
            f.write(streams.at(i));
            f.close();
            if (i > 0)
                args << QStringLiteral(";") << QStringLiteral("new-window") << QStringLiteral("-d");
            args << QStringLiteral("cat '%1'; touch '%2'; exec sleep 600")
                            .arg(input, dir.filePath(QStringLiteral("done%1").arg(i)));
        }
        const QString socket = QStringLiteral("ty-test-%1-%2").arg(QCoreApplication::applicationPid()).arg(++m_counter);
        run(args, socket);
        QElapsedTimer t;
        t.start();
        for (qsizetype i = 0; i < streams.size(); ++i) {
            while (!QFileInfo::exists(dir.filePath(QStringLiteral("done%1").arg(i))) && t.elapsed() < 30000)
                QThread::msleep(20);
        }
        QThread::msleep(200); // cat has exited: let tmux parse the last bytes
        for (qsizetype i = 0; i < streams.size(); ++i) {
            const QString target = QStringLiteral(":%1").arg(i);
            const QByteArray rows
                    = run({QStringLiteral("capture-pane"), QStringLiteral("-p"), QStringLiteral("-t"), target,
                                  QStringLiteral("-S"), QStringLiteral("-"), QStringLiteral("-E"), QStringLiteral("-")},
                            socket);
            const int historySize = run({QStringLiteral("display-message"), QStringLiteral("-p"), QStringLiteral("-t"),
                                                target, QStringLiteral("#{history_size}")},
                    socket)
                                            .trimmed()
                                            .toInt();
            const QByteArray history = historySize == 0
                    ? QByteArray()
                    : run({QStringLiteral("capture-pane"), QStringLiteral("-p"), QStringLiteral("-J"),
                                  QStringLiteral("-t"), target, QStringLiteral("-S"), QStringLiteral("-"),
                                  QStringLiteral("-E"), QStringLiteral("-1")},
                            socket);
            const QByteArray screen = run({QStringLiteral("capture-pane"), QStringLiteral("-p"), QStringLiteral("-J"),
                                                  QStringLiteral("-t"), target, QStringLiteral("-S"),
                                                  QStringLiteral("0"), QStringLiteral("-E"), QStringLiteral("-")},
                    socket);
            out[i].rows = normalise(QString::fromUtf8(rows).split(u'\n'));
            out[i].joinedHistory = normalise(QString::fromUtf8(history).split(u'\n'));
            out[i].joinedScreen = normalise(QString::fromUtf8(screen).split(u'\n'));
        }
        run({QStringLiteral("kill-server")}, socket);
        return out;
    }

private:
    QByteArray run(QStringList args, const QString& socket)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("LANG"), QStringLiteral("C.UTF-8"));
        env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C.UTF-8"));
        env.remove(QStringLiteral("TMUX"));
        p.setProcessEnvironment(env);
        args.prepend(socket);
        args.prepend(QStringLiteral("-L"));
        args.prepend(QStringLiteral("-u"));
        p.start(m_tmux, args);
        p.waitForFinished(20000);
        return p.readAllStandardOutput();
    }

    QString m_tmux;
    int m_counter = 0;
};

QString firstDifference(const QStringList& mine, const QStringList& tmux)
{
    const qsizetype n = std::max(mine.size(), tmux.size());
    for (qsizetype i = 0; i < n; ++i) {
        const QString a = i < mine.size() ? mine.at(i) : QStringLiteral("<none>");
        const QString b = i < tmux.size() ? tmux.at(i) : QStringLiteral("<none>");
        if (a != b)
            return QStringLiteral("row %1 of %2/%3\n renderer: [%4]\n tmux:     [%5]")
                    .arg(i)
                    .arg(mine.size())
                    .arg(tmux.size())
                    .arg(a, b);
    }
    return {};
}

QByteArray repeat(const QByteArray& s, int n)
{
    QByteArray out;
    for (int i = 0; i < n; ++i)
        out += s;
    return out;
}

} // namespace

class TestTerminalRendererTmux : public QObject {
    Q_OBJECT

private:
    TmuxOracle m_tmux;

    void compare(const QByteArray& bytes, int width, int height, bool dropReplacement = false)
    {
        const Rendered expected = m_tmux.capture(bytes, width, height);
        QVERIFY2(!expected.rows.isEmpty() || bytes.trimmed().isEmpty(), "tmux produced no output");
        for (quint32 seed : {1u, 2u}) {
            Rendered mine = renderBytes(bytes, width, height, seed);
            if (dropReplacement) {
                for (QString& s : mine.rows)
                    s.remove(QChar(0xFFFD));
                for (QString& s : mine.joined)
                    s.remove(QChar(0xFFFD));
                mine.rows = normalise(mine.rows);
                mine.joined = normalise(mine.joined);
            }
            const QString diff = firstDifference(mine.rows, expected.rows);
            QVERIFY2(diff.isEmpty(), qPrintable(diff));
            const QString diffJ = firstDifference(mine.joined, expected.joined);
            QVERIFY2(diffJ.isEmpty(), qPrintable(QStringLiteral("joined (-J): ") + diffJ));
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!m_tmux.available())
            QSKIP("tmux is not installed: the terminal oracle cannot run");
    }

    void fixtures_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("width");
        for (const char* f : {"plain_torch", "lightning_run", "lightning_tqdm", "nested_tqdm", "oom", "oom_midrun"}) {
            for (int w : {80, 132, 250}) {
                QTest::newRow(qPrintable(QStringLiteral("%1@%2").arg(QLatin1String(f)).arg(w)))
                        << QStringLiteral("gpu-workstation/logs/%1.log").arg(QLatin1String(f)) << w;
            }
        }
    }

    void fixtures()
    {
        QFETCH(QString, file);
        QFETCH(int, width);
        const QByteArray bytes = test::readFixture(file);
        QVERIFY2(!bytes.isEmpty(), qPrintable(file));
        compare(bytes, width, 50);
    }

    void generated_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("width");
        QTest::addColumn<bool>("dropReplacement");

        QByteArray bar = "start\n";
        for (int i = 0; i <= 100; i += 7)
            bar += "\rprogress " + QByteArray::number(i) + "% |" + repeat("#", i / 10) + "|";
        bar += "\ndone\n";
        QTest::newRow("cr-bar") << bar << 80 << false;

        QByteArray two = "header\n";
        for (int i = 0; i < 5; ++i) {
            two += "\router " + QByteArray::number(i) + "/5\n";
            for (int j = 0; j < 4; ++j)
                two += "\rinner " + QByteArray::number(j) + "/4 loss=" + QByteArray::number(1.0 / (j + 1)) + "\x1b[A";
            two += "\n\r\x1b[2K\x1b[A";
        }
        two += "\nend\n";
        QTest::newRow("two-bars-cursor-up") << two << 80 << false;

        QTest::newRow("wrap-long") << repeat("abcdefghij", 25) + "\nnext\n" << 80 << false;
        QTest::newRow("wrap-exact") << repeat("0123456789", 8) + "\n" + repeat("0123456789", 8) + "X\n" << 80 << false;
        QTest::newRow("wrap-wide-at-edge")
                << repeat("x", 79) + "\xf0\x9f\x92\xa1tail\n" + repeat("y", 78) + "\xe4\xb8\xad\xe6\x96\x87\n"
                << 80 << false;
        QTest::newRow("wrap-then-cr") << repeat("a", 100) + "\rB\n" << 80 << false;
        QTest::newRow("tabs") << QByteArray("a\tb\tc\n12345678\tX\n\t\t\t\t\t\t\t\t\t\t\t\tend\nab\tcd\t\bZ\n") << 80
                              << false;
        QTest::newRow("invalid-utf8") << QByteArray("abc\xff\n\xe2\x82\nok\xc3\nx\xed\xa0\x80\nfin\xf0\x9f\x92\n") << 80
                                      << true;
        QTest::newRow("colours") << QByteArray(
                "\x1b[1;31mred\x1b[0m plain \x1b[38;5;208morange\x1b[0m \x1b[38;2;1;2;3mtc\x1b[m "
                "\x1b[48:2::10:20:30mbg\x1b[49m \x1b[4:3mcurly\x1b[4:0m \x1b[7minv\x1b[27m\n")
                                 << 80 << false;
        QTest::newRow("erase-line") << QByteArray(
                "hello world\r\x1b[Kbye\nabcdef\x1b[3D\x1b[1Kx\n123456\x1b[2Kfoo\nabcdef\x1b[2D\x1b[0K!\n")
                                    << 80 << false;
        QTest::newRow("backspace") << QByteArray("abc\b\bX\n") + repeat("0123456789", 8) + "\bY\n"
                        + repeat("0123456789", 8) + "K\b\bW\n"
                                   << 80 << false;
        QTest::newRow("osc") << QByteArray(
                "\x1b]0;title\x07visible\n\x1b]8;;http://example.com\x1b\\link\x1b]8;;\x1b\\ after\n"
                "\x1bPqignored\x1b\\dcs-gone\n\x1b(Bcharset\x1b)0\n")
                             << 80 << false;
        // Where tmux's input.c ends strings: CAN and SUB are data inside a
        // DCS's data, and so is an ESC not followed by '\'; BEL ends only an OSC.
        QTest::newRow("string-ends") << QByteArray(
                "a\x1bPq\x18\x1a\x07hidden\x1b\x1b[1mstill\x1b\\b\n"
                "c\x1b_apc\x07hidden\x1b\\d\x1b^pm\x07x\x18"
                "e\x1bXsos\x1a"
                "f\n"
                "g\x1bP1;2|x\x18h\x1bP1:2q\x18i\x1bP1$;q\x1aj\x1bP?1q\x1b\\k\x1bktitle\x1b\\l\n"
                "m\x1b]0;t\x1b[31mn\x1b]0;t\x18o\x1bP\x1bMp\n")
                                     << 80 << false;
        QByteArray rows5;
        for (int i = 1; i <= 8; ++i)
            rows5 += "row" + QByteArray::number(i) + (i < 8 ? "\n" : "");
        QTest::newRow("insert-line") << rows5 + "\x1b[5A\x1b[4G\x1b[2LX\x1b[B\x1b[LY\x1b[99LZ\n" << 80 << false;
        QTest::newRow("delete-line") << rows5 + "\x1b[6A\x1b[3G\x1b[2MX\x1b[MY\x1b[B\x1b[99MZ\nafter\n" << 80 << false;
        QTest::newRow("scroll-up") << rows5 + "\x1b[3A\x1b[2SX\x1b[SY\nnext\n\x1b[60Send\n" << 80 << false;
        QTest::newRow("scroll-down") << rows5 + "\x1b[3A\x1b[2TX\x1b[TY\x1b[99B\x1b[60Tlast\n" << 80 << false;
        QTest::newRow("repeat") << QByteArray("ab\x1b[3bc\x1b[b\x1b[2b|\n") + repeat("x", 77)
                        + "y\x1b[5b|\n"
                          "\xe4\xb8\xad\x1b[3b|\nq\r\x1b[3b|\nr\x1b[31m\x1b[3b|\ns\x1b[0b|\n"
                                << 80 << false;
        QTest::newRow("cursor-moves") << QByteArray(
                "line1\nline2\nline3\x1b[2AUP\x1b[1BDN\n\x1b[5Cx\x1b[3Gy\x1b[2Dz\nq\x1b[999Cr\n")
                                      << 80 << false;
        QTest::newRow("cursor-up-clamped") << QByteArray("a\nb\x1b[10Ac\n") << 80 << false;
        QTest::newRow("erase-at-pending-wrap") << repeat("0123456789", 8) + "\x1b[KZ\n" << 80 << false;
        QTest::newRow("save-restore") << QByteArray("abc\x1b"
                                                    "7\ndef\x1b"
                                                    "8X\n\x1b[sqq\nrr\x1b[uY\n")
                                      << 80 << false;
        QByteArray scroll;
        for (int i = 0; i < 100; ++i)
            scroll += "row " + QByteArray::number(i) + "\n";
        scroll += "\x1b[70AX\x1b[3;5HY\x1b[10BZ\n";
        QTest::newRow("cursor-up-beyond-screen") << scroll << 80 << false;
        QTest::newRow("crlf") << QByteArray("a\r\nb\n\rc\r\r\nd\x0b"
                                            "e\n")
                              << 80 << false;
        QTest::newRow("clear-screen") << QByteArray("a\nb\n\x1b[2Jc\nd\n") << 80 << false;
        QTest::newRow("combining") << QByteArray("e\xcc\x81x\n\xcc\x81start\n") << 80 << false;
        QByteArray rich = "\x1b[?25l";
        for (int f = 0; f < 6; ++f) {
            if (f > 0)
                rich += "\r\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K";
            rich += "\x1b[1mEpoch " + QByteArray::number(f) + "\x1b[0m \xe2\x94\x81\xe2\x94\x81 "
                    + QByteArray::number(f * 20)
                    + "%\n"
                      "train_loss: 0."
                    + QByteArray::number(9 - f) + "\nval_acc: 0." + QByteArray::number(f);
        }
        rich += "\x1b[?25h\n";
        QTest::newRow("rich-live") << rich << 80 << false;
        QTest::newRow("ech-dch-ich") << QByteArray(
                "abcdefgh\x1b[3G\x1b[2X\nabcdefgh\x1b[3G\x1b[2P\nabcdefgh\x1b[3G\x1b[2@\n")
                                     << 80 << false;
        // The alternate screen, left again before the stream ends (what a
        // finished run shows; while on it, see randomStreams).
        QByteArray watch = "epoch 1 loss=0.9\nepoch 2 loss=0.8\n\rsaving";
        watch += "\x1b[?1049h\x1b[H\x1b[2J";
        for (int f = 0; f < 5; ++f) {
            watch += "\x1b[HEvery 2.0s: nvidia-smi\x1b[K\n\n";
            for (int g = 0; g < 8; ++g) // more rows than the screen: it scrolls, nothing reaches the history
                watch += "GPU " + QByteArray::number(g) + " util " + QByteArray::number(10 * f + g) + "%\x1b[K\n";
        }
        watch += "\x1b[?1049l done\nepoch 3 loss=0.7\n";
        QTest::newRow("alt-screen-1049") << watch << 80 << false;
        QTest::newRow("alt-screen-47-1047")
                << QByteArray("main 1\nmain 2\x1b[?47h\x1b[3;5Halt\x1b[?47lX\n\x1b[?1047hgone\n\x1b[2J\x1b[?1047lY\n"
                              "\x1b[?1049h\x1b[?1049h\x1b[5;5Hz\x1b[?1049lW\x1b[3;3H\x1b[?1049lV\n")
                << 80 << false;
        QByteArray altTop;
        for (int i = 0; i < 70; ++i)
            altTop += "line " + QByteArray::number(i) + "\n";
        altTop += "\x1b"
                  "7\x1b[?1049h\x1b[Htop\x1b[L\x1bM\x1b[2Tx\x1b[?1049l\x1b"
                  "8!\n";
        QTest::newRow("alt-screen-history-kept") << altTop << 80 << false;
        // What the random streams found, one case each (at 7 columns, 3 rows
        // where the screen's size matters: compare() uses 50 rows).
        QTest::newRow("saved-cursor-keeps-screen-row") << QByteArray("1\n2\n3\x1b"
                                                                     "7")
                        + repeat("\nx", 60)
                        + "\x1b"
                          "8X\n" << 80 << false;
        QTest::newRow("reverse-index-at-top") << QByteArray("a\nb\x1b[H\x1bM\x1bMtop\n") << 80 << false;
        QTest::newRow("vpa-keeps-pending-wrap") << QByteArray("abcdefg\x1b[1dk\n") << 7 << false;
        QTest::newRow("cuf-from-pending-wrap") << QByteArray("abcdefg\x1b[CX\n") << 7 << false;
        QTest::newRow("ed0-from-home-scrolls") << QByteArray("a\nb\x1b[H\x1b[Jc\n") << 80 << false;
        QTest::newRow("ech-dch-ich-at-pending-wrap")
                << QByteArray("abcdefg\x1b[X\n1234567\x1b[P\nABCDEFG\x1b[@\n") << 7 << false;
        QTest::newRow("erase-unwraps") << QByteArray("abcdefghi\x1b[A\x1b[2K\n\x08X\n") << 7 << false;
        QTest::newRow("scroll-down-unwraps") << QByteArray("abcdefghi\x1b[H\x1b[T\x1b[2B\r\x08X\n") << 7 << false;
        QTest::newRow("insert-line-unwraps") << QByteArray("abcdefghi\x1b[L\x1b[B\r\x08X\n") << 7 << false;
        QTest::newRow("clear-moves-used-blank-rows") << QByteArray("a\n\x1b[P\x1b[2Jc\n") << 80 << false;
        QTest::newRow("narrow") << QByteArray(
                "the quick brown fox\tjumps\x1b[A\x1b[Cover\n\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\n")
                                << 7 << false;
    }

    void strayIntroducers_data()
    {
        QTest::addColumn<QByteArray>("introducer");
        for (const auto& [name, bytes] : test::strayStringIntroducers())
            QTest::newRow(name) << bytes;
    }

    void strayIntroducers()
    {
        QFETCH(QByteArray, introducer);
        QByteArray metrics;
        for (int n = 1; n <= 200; ++n)
            metrics += "step=" + QByteArray::number(n) + " loss=" + QByteArray::number(n / 1000.0, 'f', 3) + "\n";
        const QByteArray head = "epoch 0 starting " + introducer + "garbage=1";
        const QByteArray bytes = head + "\n" + metrics;
        const Rendered terminated = m_tmux.capture(head + "\x1b\\\n" + metrics, 80, 50);
        const Rendered mine = renderBytes(bytes, 80, 50, 1);
        QCOMPARE(mine.rows.size(), 201);
        QCOMPARE(mine.rows.constLast(), QStringLiteral("step=200 loss=0.200"));
        const QString diff = firstDifference(mine.rows, terminated.rows);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        // tmux, without the ST: the string swallows every line after it.
        const Rendered raw = m_tmux.capture(bytes, 80, 50);
        QVERIFY2(!raw.rows.join(u'\n').contains(QStringLiteral("step=")), qPrintable(raw.rows.join(u'\n')));
    }

    // Seeded random streams (randomStream()), each compared with tmux while
    // the stream is still open: history and the screen shown. The seed is
    // TY_TMUX_RANDOM_SEED if set; a mismatch names it and the stream.
    void randomStreams_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::newRow("20x6") << 20 << 6;
        QTest::newRow("33x9") << 33 << 9;
        QTest::newRow("80x4") << 80 << 4;
        QTest::newRow("7x3") << 7 << 3;
    }

    void randomStreams()
    {
        QFETCH(int, width);
        QFETCH(int, height);
        bool ok = false;
        quint32 seed = qEnvironmentVariable("TY_TMUX_RANDOM_SEED").toUInt(&ok);
        if (!ok)
            seed = 20260521u;
        seed ^= quint32(width * 1000 + height);
        QRandomGenerator rng(seed);
        QList<QByteArray> streams;
        for (int i = 0; i < 80; ++i)
            streams.append(randomStream(rng));
        const QList<Rendered> expected = m_tmux.captureMany(streams, width, height);
        for (qsizetype i = 0; i < streams.size(); ++i) {
            Rendered mine = renderLive(streams.at(i), width, height, seed + quint32(i));
            QString diff = firstDifference(mine.rows, expected.at(i).rows);
            // The joined rows without their spaces: which rows join is what
            // they check (the rows themselves are compared above). tmux joins
            // a wrapped row with its erased cells as spaces (up to its
            // cellused), the renderer without those past its last written one.
            const auto squeeze = [](QStringList rows) {
                for (QString& r : rows)
                    r.remove(u' ');
                return rows;
            };
            mine.joinedHistory = squeeze(mine.joinedHistory);
            mine.joinedScreen = squeeze(mine.joinedScreen);
            const QStringList tmuxHistory = squeeze(expected.at(i).joinedHistory);
            const QStringList tmuxScreen = squeeze(expected.at(i).joinedScreen);
            if (diff.isEmpty() && mine.committedWrapsKept == 0) {
                diff = firstDifference(mine.joinedHistory, tmuxHistory);
                if (!diff.isEmpty())
                    diff = QStringLiteral("history joined (-J): ") + diff;
            }
            if (diff.isEmpty()) {
                diff = firstDifference(mine.joinedScreen, tmuxScreen);
                if (!diff.isEmpty())
                    diff = QStringLiteral("screen joined (-J): ") + diff;
            }
            if (!diff.isEmpty())
                QFAIL(qPrintable(
                        QStringLiteral("seed %1 (for %2x%3), stream %4: %5\n stream: %6\n renderer:\n%7\n tmux:\n%8")
                                .arg(seed)
                                .arg(width)
                                .arg(height)
                                .arg(i)
                                .arg(diff, escaped(streams.at(i)), mine.rows.join(u'\n'),
                                        expected.at(i).rows.join(u'\n'))));
        }
    }

    void generated()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(int, width);
        QFETCH(bool, dropReplacement);
        compare(bytes, width, 50, dropReplacement);
    }
};

QTEST_GUILESS_MAIN(TestTerminalRendererTmux)
#include "TestTerminalRendererTmux.moc"
