// Memoization's tree hasher (core/memo/TreeHasher.h) on a generated tree of
// --files N files (default 10,000) of 4-64 KiB in 100 folders, beside
// `find DIR -type f -print0 | xargs -0 sha256sum` over the same files in the
// same run (the baseline every figure is a ratio to). Steps:
//   1. generate the tree, then wait out TreeHasher's racy window (3 s), so the
//      files are cacheable as a user's checked-out code is;
//   2. the baseline, twice (the first warms the page cache; the second counts);
//   3. first hash with an empty cache (every file read and hashed, the cache
//      written);
//   4. the same tree again with a new hasher on that cache (another process):
//      nothing changed;
//   5. one file rewritten (size and mtime change), hashed again.
// Every step reads from the page cache (files just written): the comparison is
// hashing cost, not disk speed. tests/bench/RESULTS.md keeps the figures.
//
//   bench_memo [--files N] [--dir DIR (a new temporary folder)]
#include "core/memo/TreeHasher.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <cstdio>
#include <random>

using namespace ty;

namespace {

double runSha256sum(const QString& dir)
{
    QElapsedTimer t;
    t.start();
    QProcess p;
    p.setStandardOutputFile(QProcess::nullDevice());
    p.start(QStringLiteral("sh"),
            {QStringLiteral("-c"), QStringLiteral("find \"$1\" -type f -print0 | xargs -0 sha256sum"),
                    QStringLiteral("sh"), dir});
    p.waitForFinished(-1);
    if (p.exitCode() != 0)
        std::fprintf(stderr, "sha256sum failed: %s\n", p.readAllStandardError().constData());
    return double(t.nsecsElapsed()) / 1e6;
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_memo v1\n");
    std::fflush(stdout);
    QCoreApplication app(argc, argv);
    int files = 10'000;
    QString dirArg;
    const QStringList args = app.arguments();
    for (qsizetype i = 1; i + 1 < args.size(); i += 2) {
        if (args[i] == QLatin1String("--files"))
            files = args[i + 1].toInt();
        else if (args[i] == QLatin1String("--dir"))
            dirArg = args[i + 1];
        else {
            std::fprintf(stderr, "usage: bench_memo [--files N] [--dir DIR]\n");
            return 2;
        }
    }
    QTemporaryDir tmp(dirArg.isEmpty() ? QDir::tempPath() + QStringLiteral("/bench_memo-XXXXXX")
                                       : dirArg + QStringLiteral("/bench_memo-XXXXXX"));
    const QString tree = tmp.filePath(QStringLiteral("tree"));
    const QString cache = tmp.filePath(QStringLiteral("cache/tree-hashes.db"));

    std::mt19937_64 rng(24);
    std::uniform_int_distribution<int> size(4 * 1024, 64 * 1024);
    qint64 total = 0;
    QByteArray buf;
    for (int i = 0; i < files; ++i) {
        const QString dir = tree + QStringLiteral("/d%1").arg(i % 100, 2, 10, QLatin1Char('0'));
        if (i < 100)
            QDir().mkpath(dir);
        buf.resize(size(rng));
        for (qsizetype j = 0; j + 8 <= buf.size(); j += 8) {
            const quint64 v = rng();
            std::memcpy(buf.data() + j, &v, 8);
        }
        QFile f(dir + QStringLiteral("/f%1.py").arg(i, 5, 10, QLatin1Char('0')));
        if (!f.open(QIODevice::WriteOnly) || f.write(buf) != buf.size()) {
            std::fprintf(stderr, "cannot write %s\n", qPrintable(f.fileName()));
            return 1;
        }
        total += buf.size();
    }
    std::printf("tree: %d files, %.1f MiB in %s\n", files, double(total) / (1024.0 * 1024.0), qPrintable(tree));
    QThread::msleep(3500); // past TreeHasher's racy window (Options::racyWindowMs)

    runSha256sum(tree); // warms the page cache
    const double baseline = runSha256sum(tree);

    auto hash = [&](const char* what) {
        TreeHasher::Options o;
        o.cachePath = cache;
        TreeHasher h(o);
        QElapsedTimer t;
        t.start();
        const auto r = h.hashTree(tree);
        const double ms = double(t.nsecsElapsed()) / 1e6;
        if (!r) {
            std::fprintf(stderr, "%s: %s\n", what, qPrintable(r.error().message));
            std::exit(1);
        }
        std::printf("| %s | %.0f ms | %.3f | %lld |\n", what, ms, ms / baseline, h.filesRead());
        return r->digest;
    };
    std::printf("\n| step | wall | ratio to sha256sum | files read |\n| --- | --- | --- | --- |\n");
    std::printf("| find \\| xargs sha256sum (baseline) | %.0f ms | 1 | %d |\n", baseline, files);
    const QString first = hash("TreeHasher, empty cache");
    const QString again = hash("TreeHasher, nothing changed (new hasher, same cache)");
    {
        QFile f(tree + QStringLiteral("/d42/f04242.py"));
        if (!f.open(QIODevice::Append) || f.write("# touched\n") <= 0) {
            std::fprintf(stderr, "cannot touch %s\n", qPrintable(f.fileName()));
            return 1;
        }
    }
    const QString touched = hash("TreeHasher, one file rewritten");
    if (first != again || touched == first) {
        std::fprintf(stderr, "digests wrong: first %s again %s touched %s\n", qPrintable(first), qPrintable(again),
                qPrintable(touched));
        return 1;
    }
    return 0;
}
