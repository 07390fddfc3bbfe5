// SqliteResultStore: round trips of every field, metric values that SQLite
// mangles, ordering, batching, flush, signals, cascades and two stores (as two
// processes would) on one file.
#include "StoreTestUtil.h"
#include "tests/support/TestSupport.h"

#include "core/store/ResultStore.h"
#include "core/store/SqliteResultStore.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>

using namespace ty;
using ty::test::RawDb;

namespace {

std::unique_ptr<ResultStore> openOrFail(const QString& path, const SqliteStoreOptions& options = {})
{
    auto store = SqliteResultStore::open(path, options);
    if (!store) {
        qWarning("%s", qPrintable(store.error().message));
        return nullptr;
    }
    return std::move(*store);
}

RunRecord fullRecord()
{
    RunRecord r;
    r.name = QStringLiteral("sweep lr=0.1 «ü» ✓");
    r.state = RunState::Failed;
    r.specYaml = QStringLiteral("name: x\ncommand: [python3, 'a b.py']\n");
    r.specPath = QStringLiteral("/home/u/exp/job.yaml");
    r.node = QStringLiteral("gpu-box-2");
    r.gpus = {3, 1, 2};
    r.argv = {QStringLiteral("python3"), QStringLiteral("train file.py"),
            QStringLiteral("--msg=it's \"quoted\" $HOME; ls"), QString(), QStringLiteral("ünï")};
    r.workdir = QStringLiteral("/home/u/my exp");
    r.env = {{QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("3,1")}, {QStringLiteral("EMPTY"), QString()},
            {QStringLiteral("WEIRD"), QStringLiteral("a=b c\nd\"e")}};
    r.tags = {QStringLiteral("z-last"), QStringLiteral("a-first"), QStringLiteral("z-last"), QStringLiteral("mid")};
    r.priority = -7;
    // Given in a +05:30 zone: stored and returned as the same instant, in UTC.
    r.createdAt = QDateTime(QDate(2024, 3, 5), QTime(13, 14, 15, 678), Qt::OffsetFromUTC, 5 * 3600 + 1800);
    r.startedAt = QDateTime(QDate(2024, 3, 5), QTime(7, 44, 16, 1), Qt::UTC);
    r.finishedAt = QDateTime(QDate(2024, 3, 5), QTime(9, 0, 0, 999), Qt::UTC);
    r.notBefore = QDateTime(QDate(2024, 3, 5), QTime(7, 44, 15, 999), Qt::UTC);
    r.exitCode = std::nullopt;
    r.exitSignal = 9;
    r.failureReason = QStringLiteral("killed by SIGKILL (out of memory?)");
    r.agentRunId = QStringLiteral("20240305-071416-ab12");
    r.consolePath = QStringLiteral("/home/u/.local/share/trainyard/runs/1/console.log");
    r.consoleOffset = 123456789012LL;
    return r;
}

bool sameBits(double a, double b)
{
    return std::bit_cast<quint64>(a) == std::bit_cast<quint64>(b);
}

MetricPoint point(RunId run, const QString& key, qint64 step, double value, std::optional<double> epoch = {},
        qint64 wall = 1'700'000'000'000)
{
    MetricPoint p;
    p.run = run;
    p.key = key;
    p.step = step;
    p.value = value;
    p.epoch = epoch;
    p.wallTimeMs = wall;
    return p;
}

// A point whose key carries a producer's handle (MetricPoint::keyHandle), in
// a QString of its own: no help from string identity.
MetricPoint handled(RunId run, const char* key, quint32 handle, qint64 step, double value)
{
    MetricPoint p = point(run, QString::fromLatin1(key), step, value);
    p.keyHandle = handle;
    return p;
}

qint64 countRows(const QString& path, const QString& sql)
{
    RawDb raw(path, true);
    return raw.scalar(sql).toLongLong();
}

} // namespace

class TestSqliteResultStore final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void runRoundTripEveryField();
    void createdAtDefaultsToNowUtc();
    void updateRunChangesMutableFieldsOnly();
    void annotateRunChangesWhatItNamesOnly();
    void runsNewestFirstWithTags();
    void unfinishedRunsAndRecentlyEndedOnes();
    void unfinishedRunsUseTheirIndexes();
    void paramsRoundTrip();
    void metricValuesRoundTripExactly();
    void oneKeyStringForManyRunsAndADeletedRun();
    void keyHandlesArePerRunAndGoByTheText();
    void keyHandlesInAReopenedAndAnotherDatabase();
    void keyHandleForgottenWithARolledBackBatch();
    void metricsOrderingAndLatest();
    void resumedRunSupersedesOverlap_data();
    void resumedRunSupersedesOverlap();
    void supersededSurvivesReopenAndSourcesAreSeparate();
    void sameStepReplacesWithoutRestart();
    void manySmallAppendsFewTransactions();
    void consoleOffsetNeverAheadOfMetrics();
    void flushMakesWritesVisibleEverywhere();
    void closingCommitsQueuedWrites();
    void twoStoresShareOneFile();
    void deleteRunCascades();
    void runGroupsHoldTheirRunsInOrder();
    void changesNameTheRunsEachWriteTouched();
    void artifactsRoundTrip();
    void noticesRoundTrip();
    void nodeLabelsOfStoredAndLocalNodes();
    void writesForUnknownRunsAreIgnored();
    void signalsAfterCommitWithIds();
    void readsFromManyThreads();
    void writeErrorsReported();

private:
    QString m_path;
    QTemporaryDir m_tmp;
    int m_serial = 0;
};

void TestSqliteResultStore::init()
{
    m_path = m_tmp.filePath(QStringLiteral("results-%1.db").arg(++m_serial));
}

// setNodeLabels (trainyardctl node label): a stored node's labels, the local
// node's (which has no NodeRecord) in meta, both kept across a reopen; a bad
// label or an unknown node refused, naming it, with nothing changed.
void TestSqliteResultStore::nodeLabelsOfStoredAndLocalNodes()
{
    {
        auto store = openOrFail(m_path);
        QVERIFY(store);
        QCOMPARE(store->localNodeLabels(), QStringList());
        NodeRecord ws;
        ws.name = QStringLiteral("ws-01");
        ws.host = QStringLiteral("ws-01.example");
        ws.labels = {QStringLiteral("old")};
        QVERIFY(store->addNode(ws));
        QVERIFY(store->setNodeLabels(QStringLiteral("local"), {QStringLiteral("a100"), QStringLiteral("ib")}));
        QVERIFY(store->setNodeLabels(QStringLiteral("ws-01"), {QStringLiteral("v100")}));
        const auto bad = store->setNodeLabels(QStringLiteral("local"), {QStringLiteral("ok"), QStringLiteral("a b")});
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.contains(QStringLiteral("node local: label 'a b' has ' ' at position 2")),
                qPrintable(bad.error().message));
        const auto unknown = store->setNodeLabels(QStringLiteral("ws-99"), {QStringLiteral("x")});
        QVERIFY(!unknown);
        QVERIFY(unknown.error().message.contains(QStringLiteral("no node named 'ws-99'")));
    }
    auto store = openOrFail(m_path);
    QVERIFY(store);
    QCOMPARE(store->localNodeLabels(), (QStringList{QStringLiteral("a100"), QStringLiteral("ib")}));
    QCOMPARE(store->nodes().size(), 1);
    QCOMPARE(store->nodes().front().labels, QStringList{QStringLiteral("v100")});
    QCOMPARE(store->nodes().front().host, QStringLiteral("ws-01.example")); // the rest as it was
    QVERIFY(!nodeLabelError(QStringLiteral("A100_x.2-b")));
    QVERIFY(nodeLabelError(QStringLiteral("-a")));
    QVERIFY(nodeLabelError(QString(64, u'a'))->contains(QStringLiteral("longer than 63")));
    QVERIFY(nodeLabelError(QStringLiteral("a\x1b[0m"))
                    ->contains(QStringLiteral("'a\\u001b[0m' has '\\u001b' at position 2")));
}

void TestSqliteResultStore::runRoundTripEveryField()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    const RunRecord in = fullRecord();
    auto id = store->createRun(in, {});
    QVERIFY2(id.has_value(), id ? "" : qPrintable(id.error().message));
    QVERIFY(*id > 0);

    auto out = store->run(*id);
    QVERIFY2(out.has_value(), out ? "" : qPrintable(out.error().message));
    QCOMPARE(out->id, *id);
    QCOMPARE(out->name, in.name);
    QCOMPARE(out->state, in.state);
    QCOMPARE(out->specYaml, in.specYaml);
    QCOMPARE(out->specPath, in.specPath);
    QCOMPARE(out->node, in.node);
    QCOMPARE(out->gpus, in.gpus);
    QCOMPARE(out->argv.size(), in.argv.size());
    QCOMPARE(out->argv, in.argv);
    QCOMPARE(out->workdir, in.workdir);
    QCOMPARE(out->env.size(), 3);
    QCOMPARE(out->env.value(QStringLiteral("WEIRD")), in.env.value(QStringLiteral("WEIRD")));
    QCOMPARE(out->env.value(QStringLiteral("CUDA_VISIBLE_DEVICES")), QStringLiteral("3,1"));
    QVERIFY(out->env.contains(QStringLiteral("EMPTY")));
    QCOMPARE(out->tags, (QStringList{QStringLiteral("z-last"), QStringLiteral("a-first"), QStringLiteral("mid")}));
    QCOMPARE(out->priority, -7);

    for (const auto& [got, want] : {std::pair{out->createdAt, in.createdAt}, std::pair{out->startedAt, in.startedAt},
                 std::pair{out->finishedAt, in.finishedAt}, std::pair{out->notBefore, in.notBefore}}) {
        QVERIFY(got.isValid());
        QCOMPARE(got.timeSpec(), Qt::UTC);
        QCOMPARE(got.toMSecsSinceEpoch(), want.toMSecsSinceEpoch());
    }
    QCOMPARE(out->createdAt.time(), QTime(7, 44, 15, 678)); // 13:14:15.678 at +05:30
    QCOMPARE(out->startedAt.time().msec(), 1);
    QCOMPARE(out->finishedAt.time().msec(), 999);

    QCOMPARE(out->exitCode, std::optional<int>());
    QCOMPARE(out->exitSignal, std::optional<int>(9));
    QCOMPARE(out->failureReason, in.failureReason);
    QCOMPARE(out->agentRunId, in.agentRunId);
    QCOMPARE(out->consolePath, in.consolePath);
    QCOMPARE(out->consoleOffset, in.consoleOffset);

    // Not-yet times and an exit code of 0 (not "no exit code").
    RunRecord fresh;
    fresh.name = QStringLiteral("fresh");
    fresh.exitCode = 0;
    auto id2 = store->createRun(fresh, {});
    QVERIFY(id2.has_value());
    auto out2 = store->run(*id2);
    QVERIFY(out2.has_value());
    QVERIFY(!out2->startedAt.isValid());
    QVERIFY(!out2->finishedAt.isValid());
    QCOMPARE(out2->exitCode, std::optional<int>(0));
    QCOMPARE(out2->exitSignal, std::optional<int>());
    QCOMPARE(out2->state, RunState::Queued);
    QVERIFY(out2->gpus.isEmpty() && out2->argv.isEmpty() && out2->env.isEmpty() && out2->tags.isEmpty());

    QVERIFY(!store->run(*id2 + 1000).has_value());
    QVERIFY(store->run(*id2 + 1000).error().message.contains(QString::number(*id2 + 1000)));
}

void TestSqliteResultStore::createdAtDefaultsToNowUtc()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    auto id = store->createRun(RunRecord{}, {});
    const qint64 after = QDateTime::currentMSecsSinceEpoch();
    QVERIFY(id.has_value());
    const auto r = store->run(*id);
    QVERIFY(r.has_value());
    QCOMPARE(r->createdAt.timeSpec(), Qt::UTC);
    QVERIFY(r->createdAt.toMSecsSinceEpoch() >= before && r->createdAt.toMSecsSinceEpoch() <= after);
}

void TestSqliteResultStore::updateRunChangesMutableFieldsOnly()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    RunRecord r = fullRecord();
    r.exitCode = 3;
    auto id = store->createRun(r, {});
    QVERIFY(id.has_value());
    store->setConsoleOffset(*id, 5000);
    const QStringList createdTags = store->run(*id)->tags; // as stored: duplicates dropped

    RunRecord u;
    u.id = *id;
    u.name = QStringLiteral("renamed");
    u.state = RunState::Succeeded;
    u.specYaml = QStringLiteral("ignored");
    u.specPath = QStringLiteral("ignored");
    u.createdAt = QDateTime::fromMSecsSinceEpoch(1, Qt::UTC); // ignored
    u.consoleOffset = 1;                                      // ignored: only setConsoleOffset moves it
    u.node = QStringLiteral("local");
    u.gpus = {0};
    u.argv = {QStringLiteral("bash"), QStringLiteral("x.sh")};
    u.workdir = QStringLiteral("/tmp");
    u.env = {{QStringLiteral("A"), QStringLiteral("1")}};
    u.tags = {QStringLiteral("new")};
    u.priority = 2;
    u.startedAt = QDateTime::fromMSecsSinceEpoch(1'709'000'000'123, Qt::UTC);
    u.finishedAt = {};
    u.exitCode = std::nullopt;
    u.exitSignal = 15;
    u.failureReason = QStringLiteral("cancelled");
    u.agentRunId = QStringLiteral("agent-2");
    u.consolePath = QStringLiteral("/c.log");
    store->updateRun(u);
    QVERIFY(store->flush().has_value());

    const auto out = store->run(*id);
    QVERIFY(out.has_value());
    QCOMPARE(out->state, RunState::Succeeded);
    QCOMPARE(out->node, u.node);
    QCOMPARE(out->gpus, u.gpus);
    QCOMPARE(out->argv, u.argv);
    QCOMPARE(out->workdir, u.workdir);
    QCOMPARE(out->env, u.env);
    QCOMPARE(out->priority, 2);
    QCOMPARE(out->startedAt.toMSecsSinceEpoch(), qint64(1'709'000'000'123));
    QVERIFY(!out->finishedAt.isValid());
    QCOMPARE(out->exitCode, std::optional<int>());
    QCOMPARE(out->exitSignal, std::optional<int>(15));
    QCOMPARE(out->failureReason, u.failureReason);
    QCOMPARE(out->agentRunId, u.agentRunId);
    QCOMPARE(out->consolePath, u.consolePath);
    // Fixed at creation / owned by setConsoleOffset / the user's (annotateRun):
    QCOMPARE(out->name, r.name);
    QCOMPARE(out->tags, createdTags);
    QCOMPARE(out->specYaml, r.specYaml);
    QCOMPARE(out->specPath, r.specPath);
    QCOMPARE(out->createdAt.toMSecsSinceEpoch(), r.createdAt.toMSecsSinceEpoch());
    QCOMPARE(out->consoleOffset, qint64(5000));
}

void TestSqliteResultStore::annotateRunChangesWhatItNamesOnly()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    RunRecord r = fullRecord();
    r.state = RunState::Running;
    auto id = store->createRun(r, {});
    QVERIFY(id.has_value());
    QCOMPARE(store->run(*id)->notes, QString());
    QCOMPARE(store->run(*id)->archived, false);
    QSignalSpy changed(store.get(), &ResultStore::runsChanged);

    RunAnnotation a;
    a.name = QStringLiteral("  digits-lr-0.01  ");
    a.tags = QStringList{QStringLiteral("best"), QStringLiteral(" best "), QString(), QStringLiteral("keep")};
    a.notes = QStringLiteral("diverged after epoch 9\nretry with warmup");
    QVERIFY(store->annotateRun(*id, a).has_value());
    auto out = store->run(*id);
    QCOMPARE(out->name, QStringLiteral("digits-lr-0.01"));
    QCOMPARE(out->tags, (QStringList{QStringLiteral("best"), QStringLiteral("keep")}));
    QCOMPARE(out->notes, *a.notes);
    QCOMPARE(out->state, RunState::Running); // nothing else
    QCOMPARE(out->argv, r.argv);
    QTRY_VERIFY(!changed.isEmpty());
    QVERIFY(changed.front().front().value<QList<RunId>>().contains(*id));

    // The engine finishing the run from the record it started with keeps the edit.
    RunRecord stale = *store->run(*id);
    stale.name = r.name;
    stale.tags = r.tags;
    stale.state = RunState::Succeeded;
    store->updateRun(stale);
    QVERIFY(store->flush().has_value());
    out = store->run(*id);
    QCOMPARE(out->state, RunState::Succeeded);
    QCOMPARE(out->name, QStringLiteral("digits-lr-0.01"));
    QCOMPARE(out->tags, (QStringList{QStringLiteral("best"), QStringLiteral("keep")}));

    // Only the fields given: archiving keeps name, tags and notes.
    RunAnnotation archive;
    archive.archived = true;
    QVERIFY(store->annotateRun(*id, archive).has_value());
    out = store->run(*id);
    QVERIFY(out->archived);
    QCOMPARE(out->notes, *a.notes);
    QCOMPARE(out->name, QStringLiteral("digits-lr-0.01"));
    bool listed = false;
    for (const RunRecord& each : store->runs())
        listed = listed || (each.id == *id && each.archived && each.notes == *a.notes);
    QVERIFY(listed);

    // Refused, and nothing changed: an empty name, a tag with a space, no such run.
    RunAnnotation empty;
    empty.name = QStringLiteral("  ");
    QVERIFY(!store->annotateRun(*id, empty));
    RunAnnotation spaced;
    spaced.tags = QStringList{QStringLiteral("a b")};
    const auto refused = store->annotateRun(*id, spaced);
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(QStringLiteral("'a b'")), qPrintable(refused.error().message));
    const auto missing = store->annotateRun(*id + 1000, a);
    QVERIFY(!missing);
    QVERIFY2(missing.error().message.contains(QStringLiteral("no run %1").arg(*id + 1000)),
            qPrintable(missing.error().message));
    QCOMPARE(store->run(*id)->name, QStringLiteral("digits-lr-0.01"));
}

void TestSqliteResultStore::runsNewestFirstWithTags()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    QList<RunId> ids;
    const qint64 t0 = 1'700'000'000'000;
    // Created out of time order, two with the same time (then: higher id first).
    for (auto [offset, tag] : {std::pair{20, "b"}, std::pair{10, "a"}, std::pair{30, "c"}, std::pair{30, "d"}}) {
        RunRecord r;
        r.name = QString::fromLatin1(tag);
        r.tags = {QString::fromLatin1(tag), QStringLiteral("all")};
        r.createdAt = QDateTime::fromMSecsSinceEpoch(t0 + offset, Qt::UTC);
        auto id = store->createRun(r, {});
        QVERIFY(id.has_value());
        ids << *id;
    }
    const auto all = store->runs();
    QStringList names;
    for (const auto& r : all) {
        names << r.name;
        QCOMPARE(r.tags, (QStringList{r.name, QStringLiteral("all")}));
    }
    QCOMPARE(names, (QStringList{QStringLiteral("d"), QStringLiteral("c"), QStringLiteral("b"), QStringLiteral("a")}));
    QCOMPARE(all.first().id, ids.last());
}

void TestSqliteResultStore::unfinishedRunsAndRecentlyEndedOnes()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    const qint64 t0 = 1'700'000'000'000;
    struct Row {
        const char* name;
        RunState state;
        QList<int> gpus;
        qint64 finishedOffset; // ms after t0; 0: not finished
    };
    const Row rows[] = {
            {"queued", RunState::Queued, {}, 0},
            {"held", RunState::Held, {}, 0},
            {"starting", RunState::Starting, {0}, 0},
            {"running", RunState::Running, {1}, 0},
            {"unknown", RunState::Unknown, {2}, 0},
            {"ok-recent-gpu", RunState::Succeeded, {0}, 5'000},
            {"failed-recent-gpu", RunState::Failed, {0, 1}, 6'000},
            {"cancelled-at-window", RunState::Cancelled, {3}, 1'000},
            {"ok-recent-cpu", RunState::Succeeded, {}, 7'000},
            {"ok-old-gpu", RunState::Succeeded, {0}, 999},
            {"failed-old-cpu", RunState::Failed, {}, 10},
    };
    int i = 0;
    for (const Row& row : rows) {
        RunRecord r;
        r.name = QString::fromLatin1(row.name);
        r.state = row.state;
        r.gpus = row.gpus;
        r.tags = {r.name, QStringLiteral("t")};
        r.createdAt
                = QDateTime::fromMSecsSinceEpoch(t0 - 100'000 + 1'000 * (i++ % 4), Qt::UTC); // ties: higher id first
        if (row.finishedOffset)
            r.finishedAt = QDateTime::fromMSecsSinceEpoch(t0 + row.finishedOffset, Qt::UTC);
        QVERIFY(store->createRun(r, {}).has_value());
    }
    const auto names = [](const QList<RunRecord>& runs) {
        QStringList out;
        for (const RunRecord& r : runs) {
            out << r.name;
            if (r.tags != QStringList{r.name, QStringLiteral("t")})
                out << QStringLiteral("(tags of %1: %2)").arg(r.name, r.tags.join(u','));
        }
        return out;
    };
    // Expected orders: runs() order (created_at, then id, descending).
    const QStringList all = names(store->runs());
    const QStringList unfinished{QStringLiteral("unknown"), QStringLiteral("running"), QStringLiteral("starting"),
            QStringLiteral("held"), QStringLiteral("queued")};
    QStringList expected;
    for (const QString& n : std::as_const(all))
        if (unfinished.contains(n))
            expected << n;
    QCOMPARE(expected.size(), unfinished.size());
    QCOMPARE(names(store->unfinishedRuns()), expected);

    // With fair share's window from t0 + 1000: the ended runs that held GPUs
    // and ended at or after it, merged in runs() order.
    const QStringList windowed{QStringLiteral("ok-recent-gpu"), QStringLiteral("failed-recent-gpu"),
            QStringLiteral("cancelled-at-window")};
    expected.clear();
    for (const QString& n : std::as_const(all))
        if (unfinished.contains(n) || windowed.contains(n))
            expected << n;
    QCOMPARE(expected.size(), unfinished.size() + windowed.size());
    QCOMPARE(names(store->unfinishedRuns(QDateTime::fromMSecsSinceEpoch(t0 + 1'000, Qt::UTC))), expected);

    // A run that ends leaves the unfinished set once committed.
    const QList<RunRecord> now = store->unfinishedRuns();
    const auto it = std::find_if(
            now.cbegin(), now.cend(), [](const RunRecord& r) { return r.name == QStringLiteral("running"); });
    QVERIFY(it != now.cend());
    RunRecord running = *it;
    running.state = RunState::Succeeded;
    running.finishedAt = QDateTime::fromMSecsSinceEpoch(t0 + 8'000, Qt::UTC);
    store->updateRun(running);
    QVERIFY(store->flush().has_value());
    QVERIFY(!names(store->unfinishedRuns()).contains(QStringLiteral("running")));
    QVERIFY(names(store->unfinishedRuns(QDateTime::fromMSecsSinceEpoch(t0 + 7'999, Qt::UTC)))
                    .contains(QStringLiteral("running")));
    QVERIFY(!names(store->unfinishedRuns(QDateTime::fromMSecsSinceEpoch(t0 + 8'001, Qt::UTC)))
                     .contains(QStringLiteral("running")));
}

void TestSqliteResultStore::unfinishedRunsUseTheirIndexes()
{
    // The scheduler reads these on every pass: SQLite must find them through
    // runs_unfinished (a partial index, used only when the query repeats its
    // condition) and runs_finished_at, never by reading the whole table.
    auto store = openOrFail(m_path);
    QVERIFY(store);
    for (int i = 0; i < 300; ++i) {
        RunRecord r;
        r.state = i % 50 == 0 ? RunState::Queued : RunState::Succeeded;
        r.gpus = {0};
        if (r.state == RunState::Succeeded)
            r.finishedAt = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000 + i, Qt::UTC);
        r.tags = {QStringLiteral("x")};
        QVERIFY(store->createRun(r, {}).has_value());
    }
    QVERIFY(store->flush().has_value());
    RawDb raw(m_path, true);
    for (bool window : {false, true}) {
        const QStringList sql = SqliteResultStore::unfinishedRunsSql(window);
        QCOMPARE(sql.size(), 3);
        for (const QString& statement : sql) {
            QString literal = statement;
            literal.replace(QLatin1Char('?'), QStringLiteral("1700000000250"));
            const QStringList plan = raw.rows(QStringLiteral("EXPLAIN QUERY PLAN ") + literal);
            QVERIFY2(!plan.isEmpty(), qPrintable(raw.error()));
            const QString text = plan.join(u'\n');
            QVERIFY2(text.contains(QStringLiteral("USING INDEX runs_unfinished")), qPrintable(text));
            QCOMPARE(text.contains(QStringLiteral("USING INDEX runs_finished_at")), window);
            for (const QString& step : plan)
                QVERIFY2(!step.endsWith(QStringLiteral("SCAN runs")), qPrintable(text));
        }
        // And the statements return what unfinishedRuns() does.
        QCOMPARE(
                store->unfinishedRuns(window ? QDateTime::fromMSecsSinceEpoch(1'700'000'000'250, Qt::UTC) : QDateTime())
                        .size(),
                window ? 6 + 49 : 6);
    }
}

void TestSqliteResultStore::paramsRoundTrip()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    const QMap<QString, QString> params{{QStringLiteral("lr"), QStringLiteral("0.001")},
            {QStringLiteral("model"), QStringLiteral("resnet 50 «x»")}, {QStringLiteral("empty"), QString()},
            {QStringLiteral("layers"), QStringLiteral("[64, 64]")}};
    auto id = store->createRun(RunRecord{}, params);
    QVERIFY(id.has_value());
    const auto out = store->params(*id);
    QCOMPARE(out.size(), 4);
    QCOMPARE(out.value(QStringLiteral("lr")), QStringLiteral("0.001"));
    QCOMPARE(out.value(QStringLiteral("model")), QStringLiteral("resnet 50 «x»"));
    QCOMPARE(out.value(QStringLiteral("layers")), QStringLiteral("[64, 64]"));
    QVERIFY(out.contains(QStringLiteral("empty")));
    QVERIFY(store->params(*id + 1).isEmpty());
}

// The writer finds key ids by the key's QString data first (a producer
// hands one QString per series): the same QString for two runs must still
// give each run its own key, and a run deleted and its key string reused
// must not reach the deleted run's key.
void TestSqliteResultStore::oneKeyStringForManyRunsAndADeletedRun()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto a = store->createRun(RunRecord{}, {});
    auto b = store->createRun(RunRecord{}, {});
    QVERIFY(a && b);
    const QString loss = QStringLiteral("loss"); // one instance for every point
    QList<MetricPoint> points;
    for (int i = 0; i < 300; ++i)
        points << point(i % 3 == 0 ? *a : *b, loss, i, double(i));
    store->appendMetrics(points);
    QVERIFY(store->flush().has_value());
    QCOMPARE(store->metrics(*a, loss).size(), 100);
    QCOMPARE(store->metrics(*b, loss).size(), 200);
    QCOMPARE(store->metrics(*a, loss).first().value, 0.0);
    QCOMPARE(store->metrics(*b, loss).first().value, 1.0);

    store->deleteRun(*a);
    QVERIFY(store->flush().has_value());
    store->appendMetrics({point(*a, loss, 1000, 1.0), point(*b, loss, 1000, 2.0)});
    QVERIFY(store->flush().has_value());
    QVERIFY(store->metrics(*a, loss).isEmpty()); // gone with its run, not written to a dead key
    QCOMPARE(store->metrics(*b, loss).size(), 201);
    QCOMPARE(store->metrics(*b, loss).last().value, 2.0);
}

// A key handle is its producer's numbering: the same handle in two runs is
// two keys, and a handle that comes back with another text (a second
// producer, a new extractor after a restart) names that text's key.
void TestSqliteResultStore::keyHandlesArePerRunAndGoByTheText()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto a = store->createRun(RunRecord{}, {});
    auto b = store->createRun(RunRecord{}, {});
    QVERIFY(a && b);
    // One batch: "loss" under handle 1 in both runs, enough points for
    // blocks and rows; "acc" under handle 2 in run a only.
    QList<MetricPoint> points;
    for (int i = 0; i < 3000; ++i) {
        points << handled(*a, "loss", 1, i, i) << handled(*b, "loss", 1, i, -i);
        if (i % 2 == 0)
            points << handled(*a, "acc", 2, i, 0.5);
    }
    store->appendMetrics(points);
    QVERIFY(store->flush().has_value());
    // A new key mid-stream (handle 3), handle 1 of run a now "val", and
    // run b's handle 2, which is "acc" in run a, now "lr".
    points.clear();
    for (int i = 3000; i < 3050; ++i)
        points << handled(*a, "grad_norm", 3, i, 7.0) << handled(*a, "val", 1, i, 8.0) << handled(*b, "lr", 2, i, 9.0)
               << handled(*b, "loss", 1, i, -i);
    store->appendMetrics(points);
    QVERIFY(store->flush().has_value());
    // Handle 1 of run a is "loss" again; "val" comes back under handle 4.
    points.clear();
    for (int i = 3050; i < 3060; ++i)
        points << handled(*a, "loss", 1, i, i) << handled(*a, "val", 4, i, 8.0);
    store->appendMetrics(points);
    QVERIFY(store->flush().has_value());

    const auto expect = [&](RunId run, const QString& key, int count, double lo, double hi) {
        const QList<MetricPoint> got = store->metrics(run, key);
        QCOMPARE(got.size(), count);
        for (const MetricPoint& p : got)
            QVERIFY2(p.value >= lo && p.value <= hi, qPrintable(QStringLiteral("%1: %2").arg(key).arg(p.value)));
    };
    expect(*a, QStringLiteral("loss"), 3010, 0, 3059);
    expect(*a, QStringLiteral("acc"), 1500, 0.5, 0.5);
    expect(*a, QStringLiteral("grad_norm"), 50, 7, 7);
    expect(*a, QStringLiteral("val"), 60, 8, 8);
    expect(*b, QStringLiteral("loss"), 3050, -3049, 0);
    expect(*b, QStringLiteral("lr"), 50, 9, 9);
    QVERIFY(store->metrics(*b, QStringLiteral("acc")).isEmpty());
    QVERIFY(store->metrics(*a, QStringLiteral("lr")).isEmpty());
    store.reset();
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metric_keys WHERE run_id = %1").arg(*a)), 4);
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metric_keys WHERE run_id = %1").arg(*b)), 2);
}

// A producer keeps its handles across the store's writer: one writer's key
// ids must not reach another's, be it the same file reopened or another
// file whose run has the same id and whose keys came in another order.
void TestSqliteResultStore::keyHandlesInAReopenedAndAnotherDatabase()
{
    const QString other = m_tmp.filePath(QStringLiteral("other-%1.db").arg(m_serial));
    RunId run = 0;
    {
        auto store = openOrFail(m_path);
        QVERIFY(store);
        auto id = store->createRun(RunRecord{}, {});
        QVERIFY(id);
        run = *id;
        QList<MetricPoint> points;
        for (int i = 0; i < 10; ++i)
            points << handled(run, "loss", 1, i, 1.0) << handled(run, "acc", 2, i, 2.0);
        store->appendMetrics(points);
        QVERIFY(store->flush().has_value());
    }
    {
        auto store = openOrFail(other);
        QVERIFY(store);
        auto id = store->createRun(RunRecord{}, {});
        QVERIFY(id);
        QCOMPARE(*id, run);
        store->appendMetrics({point(run, QStringLiteral("acc"), 0, 2.0)}); // "acc" takes the first key id here
        QVERIFY(store->flush().has_value());
        QList<MetricPoint> points;
        for (int i = 1; i < 11; ++i)
            points << handled(run, "loss", 1, i, 1.0) << handled(run, "acc", 2, i, 2.0);
        store->appendMetrics(points);
        QVERIFY(store->flush().has_value());
        QCOMPARE(store->metrics(run, QStringLiteral("loss")).size(), 10);
        QCOMPARE(store->metrics(run, QStringLiteral("acc")).size(), 11);
        for (const MetricPoint& p : store->metrics(run, QStringLiteral("acc")))
            QCOMPARE(p.value, 2.0);
    }
    {
        auto store = openOrFail(m_path);
        QVERIFY(store);
        QList<MetricPoint> points;
        for (int i = 10; i < 20; ++i)
            points << handled(run, "loss", 1, i, 1.0) << handled(run, "acc", 2, i, 2.0);
        store->appendMetrics(points);
        QVERIFY(store->flush().has_value());
        for (const QString& key : {QStringLiteral("loss"), QStringLiteral("acc")}) {
            const QList<MetricPoint> got = store->metrics(run, key);
            QCOMPARE(got.size(), 20);
            for (const MetricPoint& p : got)
                QCOMPARE(p.value, key == QLatin1String("loss") ? 1.0 : 2.0);
        }
    }
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metric_keys")), 2);
}

// A batch that made a key row and was rolled back took the row with it, and
// SQLite gives its id to the next key made: the handle's slot must not keep it.
void TestSqliteResultStore::keyHandleForgottenWithARolledBackBatch()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto run = store->createRun(RunRecord{}, {});
    QVERIFY(run);
    {
        // Every metrics row insert fails (not a constraint: the batch is rolled back).
        RawDb raw(m_path);
        QVERIFY(raw.exec(QStringLiteral(
                "CREATE TRIGGER test_fail AFTER INSERT ON metrics BEGIN INSERT INTO no_such_table VALUES (1); END")));
    }
    store->appendMetrics({handled(*run, "loss", 1, 0, 1.0)});
    QVERIFY(!store->flush().has_value());
    {
        RawDb raw(m_path);
        QVERIFY(raw.exec(QStringLiteral("DROP TRIGGER test_fail")));
    }
    store->appendMetrics({handled(*run, "acc", 2, 0, 2.0)}); // the id "loss" had in the rolled-back batch
    QVERIFY(store->flush().has_value());
    store->appendMetrics({handled(*run, "loss", 1, 1, 3.0)});
    QVERIFY(store->flush().has_value());
    const QList<MetricPoint> acc = store->metrics(*run, QStringLiteral("acc"));
    const QList<MetricPoint> loss = store->metrics(*run, QStringLiteral("loss"));
    QCOMPARE(acc.size(), 1);
    QCOMPARE(acc.first().value, 2.0);
    QCOMPARE(loss.size(), 1);
    QCOMPARE(loss.first().value, 3.0);
}

void TestSqliteResultStore::metricValuesRoundTripExactly()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());

    const double inf = std::numeric_limits<double>::infinity();
    const QList<double> values{std::numeric_limits<double>::quiet_NaN(), inf, -inf, -0.0, 0.0, 1e-308, DBL_MAX,
            -DBL_MAX, DBL_MIN, std::numeric_limits<double>::denorm_min(), 0.1, 1.0 / 3.0, -2.5, 3.0,
            9007199254740993.0, // 2^53 + 1 rounds to 2^53: integral, stored as integer by SQLite
            1e300, -std::numeric_limits<double>::quiet_NaN()};
    // Repeated so the writer's 64-row statements are exercised as well as
    // its single-row tail.
    constexpr int kRepeats = 9;
    QList<MetricPoint> points;
    for (int i = 0; i < values.size() * kRepeats; ++i)
        points << point(*id, QStringLiteral("v"), i, values[i % values.size()],
                i % 2 ? std::optional<double>(i * 0.1 + 1e-17) : std::nullopt, 1'700'000'000'000 + i);
    // Epoch values SQLite could mangle too.
    points << point(*id, QStringLiteral("e"), 0, 1.0, -0.0) << point(*id, QStringLiteral("e"), 1, 1.0, DBL_MAX)
           << point(*id, QStringLiteral("e"), 2, 1.0, 0.5);
    store->appendMetrics(points);
    QVERIFY(store->flush().has_value());

    const auto out = store->metrics(*id, QStringLiteral("v"));
    QCOMPARE(out.size(), values.size() * kRepeats);
    for (int i = 0; i < out.size(); ++i) {
        const MetricPoint& p = out[i];
        const double want = values[i % values.size()];
        QCOMPARE(p.run, *id);
        QCOMPARE(p.key, QStringLiteral("v"));
        QCOMPARE(p.step, qint64(i));
        QCOMPARE(p.wallTimeMs, qint64(1'700'000'000'000 + i));
        if (std::isnan(want))
            QVERIFY2(std::isnan(p.value), qPrintable(QString::number(i)));
        else
            QVERIFY2(sameBits(p.value, want),
                    qPrintable(QStringLiteral("#%1: %2 (bits %3) came back as %4 (bits %5)")
                                       .arg(i)
                                       .arg(want, 0, 'g', 17)
                                       .arg(std::bit_cast<quint64>(want), 16, 16, QLatin1Char('0'))
                                       .arg(p.value, 0, 'g', 17)
                                       .arg(std::bit_cast<quint64>(p.value), 16, 16, QLatin1Char('0'))));
        QCOMPARE(p.epoch.has_value(), i % 2 == 1);
        if (p.epoch)
            QVERIFY(sameBits(*p.epoch, i * 0.1 + 1e-17));
    }
    const auto e = store->metrics(*id, QStringLiteral("e"));
    QCOMPARE(e.size(), 3);
    QCOMPARE(e[1].epoch, std::optional<double>(DBL_MAX));
    QCOMPARE(e[2].epoch, std::optional<double>(0.5));

    // And what is in the file is portable: NULL value + kind for non-finite.
    RawDb raw(m_path, true);
    QCOMPARE(raw.rows(QStringLiteral("SELECT quote(value), kind FROM metrics WHERE step < 4 AND key_id ="
                                     " (SELECT id FROM metric_keys WHERE key = 'v') ORDER BY step")),
            (QStringList{QStringLiteral("NULL|1"), QStringLiteral("NULL|2"), QStringLiteral("NULL|3"),
                    QStringLiteral("0.0|4")}));
}

void TestSqliteResultStore::metricsOrderingAndLatest()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    auto other = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value() && other.has_value());
    // Arrival order: steps out of order, a repeated step, keys interleaved,
    // and another run's points in between.
    store->appendMetrics({point(*id, QStringLiteral("val/acc"), 2, 0.8), point(*id, QStringLiteral("loss"), 5, 0.5),
            point(*other, QStringLiteral("loss"), 0, 99.0), point(*id, QStringLiteral("loss"), 1, 0.9)});
    store->appendMetrics({point(*id, QStringLiteral("loss"), 5, 0.45), point(*id, QStringLiteral("acc"), 0, 0.1),
            point(*id, QStringLiteral("val/acc"), 1, 0.7), point(*id, QStringLiteral("loss"), 3, 0.6)});
    QVERIFY(store->flush().has_value());

    // Every point is kept; a step that goes back (loss 5 -> 1, 5 -> 3,
    // val/acc 2 -> 1) starts a new segment that supersedes the overlap.
    const auto all = store->allMetrics(*id);
    QStringList seen;
    for (const auto& p : all)
        seen << QStringLiteral("%1@%2=%3%4")
                        .arg(p.key)
                        .arg(p.step)
                        .arg(p.value)
                        .arg(p.superseded ? QStringLiteral(" (superseded)") : QString());
    QCOMPARE(seen,
            (QStringList{QStringLiteral("acc@0=0.1"), QStringLiteral("loss@1=0.9"), QStringLiteral("loss@3=0.6"),
                    QStringLiteral("loss@5=0.5 (superseded)"), QStringLiteral("loss@5=0.45 (superseded)"),
                    QStringLiteral("val/acc@1=0.7"), QStringLiteral("val/acc@2=0.8 (superseded)")}));
    // What charts read: the current points only.
    QStringList current;
    for (const auto& p : store->metrics(*id))
        current << QStringLiteral("%1@%2=%3").arg(p.key).arg(p.step).arg(p.value);
    QCOMPARE(current,
            (QStringList{QStringLiteral("acc@0=0.1"), QStringLiteral("loss@1=0.9"), QStringLiteral("loss@3=0.6"),
                    QStringLiteral("val/acc@1=0.7")}));
    QCOMPARE(store->metrics(*id, QStringLiteral("val/acc")).size(), 1);
    QCOMPARE(store->metrics(*id, QStringLiteral("nope")).size(), 0);
    QCOMPARE(store->metrics(*other).size(), 1);
    QCOMPARE(store->metricKeys(*id),
            (QStringList{QStringLiteral("acc"), QStringLiteral("loss"), QStringLiteral("val/acc")}));

    const auto latest = store->latestMetrics(*id);
    QCOMPARE(latest.size(), 3);
    QCOMPARE(latest.value(QStringLiteral("loss")).step, qint64(3)); // the current segment's last
    QCOMPARE(latest.value(QStringLiteral("loss")).value, 0.6);
    QCOMPARE(latest.value(QStringLiteral("val/acc")).value, 0.7);
    QCOMPARE(latest.value(QStringLiteral("acc")).value, 0.1);
    QCOMPARE(latest.value(QStringLiteral("acc")).run, *id);
    QCOMPARE(store->latestMetrics(*other).value(QStringLiteral("loss")).value, 99.0);
}

void TestSqliteResultStore::resumedRunSupersedesOverlap_data()
{
    QTest::addColumn<bool>("oneAppend");
    QTest::newRow("two-appends") << false;
    QTest::newRow("one-append") << true;
}

// A run logs steps 1..100, is resumed from its step-50 checkpoint and logs
// 50..120: the charts' series is 1..49 from the first segment and 50..120
// from the second; the 51 overlapping points stay in the database, marked.
void TestSqliteResultStore::resumedRunSupersedesOverlap()
{
    QFETCH(bool, oneAppend);
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    QList<MetricPoint> first, second;
    for (int s = 1; s <= 100; ++s)
        first << point(*id, QStringLiteral("loss"), s, s == 60 ? nan : 1000.0 + s, {}, 1000 + s);
    // Another key interleaved, never going back.
    for (int s = 1; s <= 100; ++s)
        first << point(*id, QStringLiteral("lr"), s, 0.1, {}, 1000 + s);
    for (int s = 50; s <= 120; ++s)
        second << point(*id, QStringLiteral("loss"), s, s == 70 ? -inf : (s == 80 ? nan : 2000.0 + s), {}, 5000 + s);
    if (oneAppend) {
        store->appendMetrics(first + second);
    } else {
        store->appendMetrics(first);
        QVERIFY(store->flush().has_value());
        store->appendMetrics(second);
    }
    QVERIFY(store->flush().has_value());

    const auto loss = store->metrics(*id, QStringLiteral("loss"));
    QCOMPARE(loss.size(), 120);
    for (int i = 0; i < loss.size(); ++i) {
        const qint64 step = i + 1;
        QCOMPARE(loss[i].step, step);
        QVERIFY(!loss[i].superseded);
        if (step == 70)
            QVERIFY(std::isinf(loss[i].value) && loss[i].value < 0);
        else if (step == 80)
            QVERIFY(std::isnan(loss[i].value));
        else
            QCOMPARE(loss[i].value, step < 50 ? 1000.0 + step : 2000.0 + step);
    }
    const auto all = store->allMetrics(*id, QStringLiteral("loss"));
    QCOMPARE(all.size(), 100 + 71);
    int superseded = 0;
    for (const MetricPoint& p : all) {
        if (!p.superseded)
            continue;
        ++superseded;
        QVERIFY(p.step >= 50 && p.step <= 100);
        QCOMPARE(p.wallTimeMs, 1000 + p.step); // the first segment's
        if (p.step == 60)
            QVERIFY(std::isnan(p.value)); // nan kept in the superseded segment too
    }
    QCOMPARE(superseded, 51);
    QCOMPARE(store->metrics(*id, QStringLiteral("lr")).size(), 100);
    QCOMPARE(store->allMetrics(*id, QStringLiteral("lr")).size(), 100);

    const auto restarts = store->metricRestarts(*id);
    QCOMPARE(restarts.size(), 1);
    QCOMPARE(restarts[0].key, QStringLiteral("loss"));
    QCOMPARE(restarts[0].step, qint64(50));
    QCOMPARE(restarts[0].superseded, 51);
    QCOMPARE(restarts[0].wallTimeMs, qint64(5050));
    QCOMPARE(restarts[0].source, MetricSource::Console);
    QCOMPARE(store->latestMetrics(*id).value(QStringLiteral("loss")).step, qint64(120));
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metrics")), qint64(100 + 71 + 100));
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metrics WHERE superseded = 1")), qint64(51));
}

void TestSqliteResultStore::supersededSurvivesReopenAndSourcesAreSeparate()
{
    auto id = [&]() -> Result<RunId> {
        auto store = openOrFail(m_path);
        if (!store)
            return fail(QStringLiteral("open"));
        auto id = store->createRun(RunRecord{}, {});
        QList<MetricPoint> pts;
        for (int s = 1; s <= 10; ++s)
            pts << point(*id, QStringLiteral("loss"), s, s);
        // The same key from a file the run writes: its own series.
        for (int s = 1; s <= 3; ++s) {
            MetricPoint p = point(*id, QStringLiteral("loss"), s, 100 + s);
            p.source = MetricSource::File;
            pts << p;
        }
        store->appendMetrics(pts);
        return id;
    }();
    QVERIFY(id.has_value());
    {
        // A new store (the next session) knows where the series stood.
        auto store = openOrFail(m_path);
        QVERIFY(store);
        QCOMPARE(store->metrics(*id).size(), 13);
        QVERIFY(store->metricRestarts(*id).isEmpty());
        store->appendMetrics(
                {point(*id, QStringLiteral("loss"), 11, 11.0), point(*id, QStringLiteral("loss"), 4, 40.0)});
        QVERIFY(store->flush().has_value());
        const auto restarts = store->metricRestarts(*id, QStringLiteral("loss"));
        QCOMPARE(restarts.size(), 1);
        QCOMPARE(restarts[0].step, qint64(4));
        QCOMPARE(restarts[0].superseded, 8); // console steps 4..11; the file's 1..3 untouched
        int fileCurrent = 0, consoleCurrent = 0;
        for (const MetricPoint& p : store->metrics(*id))
            (p.source == MetricSource::File ? fileCurrent : consoleCurrent)++;
        QCOMPARE(fileCurrent, 3);
        QCOMPARE(consoleCurrent, 4); // 1, 2, 3 and the new 4
    }
}

void TestSqliteResultStore::sameStepReplacesWithoutRestart()
{
    // Lightning's CSV logs `epoch` on the train row and again on the val row
    // of the same step: the newer value wins, no restart is recorded.
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    const QString key = QStringLiteral("epoch");
    store->appendMetrics({point(*id, key, 49, 0.0), point(*id, key, 49, 0.5), point(*id, key, 99, 1.0),
            point(*id, key, 99, 1.5), point(*id, key, 149, 2.0)});
    QVERIFY(store->flush().has_value());
    const QList<MetricPoint> current = store->metrics(*id, key);
    QCOMPARE(current.size(), 3);
    QCOMPARE(current[0].value, 0.5);
    QCOMPARE(current[1].value, 1.5);
    QCOMPARE(current[2].value, 2.0);
    QCOMPARE(store->allMetrics(*id, key).size(), 5);
    QVERIFY(store->metricRestarts(*id).isEmpty());
    // A real step back after that is still a restart.
    store->appendMetrics({point(*id, key, 99, 9.0)});
    QVERIFY(store->flush().has_value());
    const auto restarts = store->metricRestarts(*id, key);
    QCOMPARE(restarts.size(), 1);
    QCOMPARE(restarts[0].step, qint64(99));
    QCOMPARE(restarts[0].superseded, 2); // the current 99 (1.5) and 149
    QCOMPARE(store->metrics(*id, key).size(), 2);
}

void TestSqliteResultStore::manySmallAppendsFewTransactions()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    QSignalSpy appended(store.get(), &ResultStore::metricsAppended);
    const qint64 before = store->transactionsCommitted();
    constexpr int kCalls = 100'000;
    for (int i = 0; i < kCalls; ++i)
        store->appendMetrics({point(*id, i % 2 ? QStringLiteral("loss") : QStringLiteral("acc"), i / 2, i * 0.5)});
    QVERIFY(store->flush().has_value());
    const qint64 transactions = store->transactionsCommitted() - before;
    qInfo("%d appendMetrics() calls committed in %lld transactions", kCalls, static_cast<long long>(transactions));
    QVERIFY(transactions >= 1);
    QVERIFY2(transactions <= kCalls / 100, qPrintable(QString::number(transactions)));

    QCOMPARE(store->metrics(*id).size(), kCalls);
    QCOMPARE(store->metrics(*id, QStringLiteral("loss")).last().value, (kCalls - 1) * 0.5);
    // One signal per run per batch, carrying the batch's count.
    QTRY_VERIFY(!appended.isEmpty());
    QCoreApplication::processEvents();
    qint64 signalled = 0;
    for (const auto& args : std::as_const(appended)) {
        QCOMPARE(args.at(0).value<RunId>(), *id);
        signalled += args.at(1).toInt();
    }
    QCOMPARE(signalled, qint64(kCalls));
    QVERIFY(appended.size() <= transactions);
}

void TestSqliteResultStore::consoleOffsetNeverAheadOfMetrics()
{
    // The log pipeline appends the metrics of a console chunk, then moves the
    // offset past the chunk. A reader (or a crash) must never see the offset
    // without the metrics before it.
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    std::atomic<bool> done{false};
    std::atomic<int> violations{0};
    std::atomic<int> checks{0};
    ResultStore* s = store.get();
    const RunId run = *id;
    std::unique_ptr<QThread> reader(QThread::create([&] {
        while (!done.load()) {
            const auto r = s->run(run);
            if (!r)
                continue;
            const qint64 offset = r->consoleOffset;
            const qint64 points = s->metrics(run, QStringLiteral("loss")).size();
            if (points < offset)
                ++violations;
            ++checks;
        }
    }));
    reader->start();
    qint64 total = 0;
    for (int chunk = 0; chunk < 300; ++chunk) {
        QList<MetricPoint> pts;
        for (int i = 0; i < 1 + chunk % 7; ++i)
            pts << point(run, QStringLiteral("loss"), total++, 1.0);
        store->appendMetrics(pts);
        store->setConsoleOffset(run, total);
        if (chunk % 50 == 0)
            QThread::msleep(2);
    }
    QVERIFY(store->flush().has_value());
    done = true;
    reader->wait();
    QVERIFY(checks.load() > 0);
    QCOMPARE(violations.load(), 0);
    QCOMPARE(store->run(run)->consoleOffset, total);
    QCOMPARE(store->metrics(run).size(), total);
}

void TestSqliteResultStore::flushMakesWritesVisibleEverywhere()
{
    SqliteStoreOptions slow;
    slow.coalesceMs = 3000; // so that unflushed writes are observably not yet committed
    auto store = openOrFail(m_path, slow);
    QVERIFY(store);
    auto reader = openOrFail(m_path);
    QVERIFY(reader);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    QVERIFY(reader->run(*id).has_value()); // createRun() returns after the commit

    QList<MetricPoint> pts;
    for (int i = 0; i < 1000; ++i)
        pts << point(*id, QStringLiteral("loss"), i, 1.0 / (i + 1));
    store->appendMetrics(pts);
    store->setConsoleOffset(*id, 777);
    QCOMPARE(reader->metrics(*id).size(), 0); // still inside the coalescing wait
    QElapsedTimer timer;
    timer.start();
    QVERIFY(store->flush().has_value());
    QVERIFY2(timer.elapsed() < 2000, "flush() must not sit out the coalescing wait");
    QCOMPARE(reader->metrics(*id).size(), 1000);
    QCOMPARE(reader->run(*id)->consoleOffset, qint64(777));

    // Visible from a thread that has never read before (its own connection).
    qsizetype fromThread = -1;
    std::unique_ptr<QThread> t(QThread::create([&] { fromThread = store->metrics(*id).size(); }));
    t->start();
    t->wait();
    QCOMPARE(fromThread, qsizetype(1000));
    // Nothing queued: returns at once.
    QVERIFY(store->flush().has_value());
}

void TestSqliteResultStore::closingCommitsQueuedWrites()
{
    RunId id = 0;
    {
        SqliteStoreOptions slow;
        slow.coalesceMs = 500;
        auto store = openOrFail(m_path, slow);
        QVERIFY(store);
        auto created = store->createRun(RunRecord{}, {});
        QVERIFY(created.has_value());
        id = *created;
        QList<MetricPoint> pts;
        for (int i = 0; i < 500; ++i)
            pts << point(id, QStringLiteral("x"), i, i);
        store->appendMetrics(pts);
        store->setConsoleOffset(id, 42);
    } // no flush()
    auto again = openOrFail(m_path);
    QVERIFY(again);
    QCOMPARE(again->metrics(id).size(), 500);
    QCOMPARE(again->run(id)->consoleOffset, qint64(42));
}

void TestSqliteResultStore::twoStoresShareOneFile()
{
    auto a = openOrFail(m_path);
    auto b = openOrFail(m_path);
    QVERIFY(a && b);
    const qint64 v0 = b->dataVersion();
    QCOMPARE(b->dataVersion(), v0); // nothing committed in between

    RunRecord r;
    r.name = QStringLiteral("from-a");
    auto id = a->createRun(r, {{QStringLiteral("p"), QStringLiteral("1")}});
    QVERIFY(id.has_value());
    const qint64 v1 = b->dataVersion();
    QVERIFY(v1 != v0);
    QCOMPARE(b->run(*id)->name, QStringLiteral("from-a"));
    QCOMPARE(b->params(*id).value(QStringLiteral("p")), QStringLiteral("1"));

    b->appendMetrics({point(*id, QStringLiteral("loss"), 0, 0.5), point(*id, QStringLiteral("loss"), 1, 0.25)});
    QVERIFY(b->flush().has_value());
    QCOMPARE(a->metrics(*id).size(), 2);

    // A's writer knows the key id of "loss"; B deletes the run behind A's back.
    a->appendMetrics({point(*id, QStringLiteral("loss"), 2, 0.2)});
    QVERIFY(a->flush().has_value());
    QSignalSpy failures(a.get(), &ResultStore::writeFailed);
    const qint64 aBefore = a->dataVersion();
    QCOMPARE(a->dataVersion(), aBefore);
    b->deleteRun(*id);
    QVERIFY(b->flush().has_value());
    QVERIFY(a->dataVersion() != aBefore);
    QVERIFY(!a->run(*id).has_value());

    // A's late points for the vanished run are dropped; the rest of the same
    // batch still commits.
    auto id2 = b->createRun(RunRecord{}, {});
    QVERIFY(id2.has_value());
    a->appendMetrics({point(*id, QStringLiteral("loss"), 3, 0.1), point(*id2, QStringLiteral("acc"), 0, 0.9)});
    a->updateRun([&] {
        RunRecord u;
        u.id = *id2;
        u.failureReason = QStringLiteral("updated-by-a");
        return u;
    }());
    QVERIFY(a->flush().has_value());
    QCoreApplication::processEvents();
    QCOMPARE(failures.size(), 0);
    QCOMPARE(b->metrics(*id2).size(), 1);
    QCOMPARE(b->metrics(*id2).first().key, QStringLiteral("acc"));
    QCOMPARE(b->metrics(*id2).first().value, 0.9);
    QCOMPARE(b->run(*id2)->failureReason, QStringLiteral("updated-by-a"));

    // The same inside the 64-row statements: B deletes again, A's cache is
    // stale for id2's "acc", and half of a 200-point append belongs to a
    // third run.
    a->appendMetrics({point(*id2, QStringLiteral("acc"), 1, 0.91)});
    QVERIFY(a->flush().has_value());
    auto id3 = b->createRun(RunRecord{}, {});
    QVERIFY(id3.has_value());
    b->deleteRun(*id2);
    QVERIFY(b->flush().has_value());
    QList<MetricPoint> mixed;
    for (int i = 0; i < 200; ++i)
        mixed << (i % 2 ? point(*id3, QStringLiteral("acc"), i, i) : point(*id2, QStringLiteral("acc"), i, -i));
    a->appendMetrics(mixed);
    QVERIFY(a->flush().has_value());
    const auto third = b->metrics(*id3);
    QCOMPARE(third.size(), 100);
    for (const auto& p : third)
        QVERIFY(p.value > 0 && p.step % 2 == 1);
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metrics")), 100);
    QCoreApplication::processEvents();
    QCOMPARE(failures.size(), 0);
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metric_keys WHERE run_id = %1").arg(*id)), 0);
}

void TestSqliteResultStore::deleteRunCascades()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    RunRecord r;
    r.tags = {QStringLiteral("t1"), QStringLiteral("t2")};
    auto doomed = store->createRun(r, {{QStringLiteral("a"), QStringLiteral("1")}});
    auto kept = store->createRun(r, {{QStringLiteral("a"), QStringLiteral("2")}});
    QVERIFY(doomed.has_value() && kept.has_value());
    for (RunId id : {*doomed, *kept}) {
        store->appendMetrics({point(id, QStringLiteral("loss"), 0, 1.0), point(id, QStringLiteral("acc"), 0, 0.5)});
        store->addArtifact(ArtifactRecord{id, QStringLiteral("model.pt"), 10, QString(), {}});
    }
    QVERIFY(store->flush().has_value());
    store->deleteRun(*doomed);
    QVERIFY(store->flush().has_value());

    QVERIFY(!store->run(*doomed).has_value());
    QVERIFY(store->params(*doomed).isEmpty());
    QVERIFY(store->metrics(*doomed).isEmpty());
    QVERIFY(store->metricKeys(*doomed).isEmpty());
    QVERIFY(store->artifacts(*doomed).isEmpty());
    for (const char* table : {"tags", "params", "metric_keys", "artifacts"})
        QCOMPARE(countRows(m_path,
                         QStringLiteral("SELECT count(*) FROM %1 WHERE run_id = %2")
                                 .arg(QLatin1String(table))
                                 .arg(*doomed)),
                0);
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metrics")), 2); // the kept run's
    QCOMPARE(store->metrics(*kept).size(), 2);
    QCOMPARE(store->run(*kept)->tags.size(), 2);
    QCOMPARE(store->runs().size(), 1);

    // Ids are never reused, even for the newest run.
    store->deleteRun(*kept);
    auto next = store->createRun(RunRecord{}, {});
    QVERIFY(next.has_value());
    QVERIFY(*next > *kept);
}

// Issue #24: sweeps, gangs, pipelines and attempts are one model of run
// groups: a run joins its groups as it is created or later, reads of runs
// carry their places, a group lists its runs in order, and a group of a
// sweep, gang or attempts goes with its last run (a pipeline's stays).
void TestSqliteResultStore::runGroupsHoldTheirRunsInOrder()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    const QDateTime made = QDateTime::fromMSecsSinceEpoch(1'700'000'000'123, Qt::UTC);
    auto pipeline = store->createGroup(RunGroupRecord{0, RunGroupKind::Pipeline, QStringLiteral("digits"), made});
    auto sweep
            = store->createGroup(RunGroupRecord{0, RunGroupKind::Sweep, QStringLiteral("lr-sweep"), made, *pipeline});
    QVERIFY2(pipeline && sweep, pipeline ? "" : qPrintable(pipeline.error().message));
    QCOMPARE(*sweep, *pipeline + 1);

    // Made in the other order than their positions: read back by position.
    QList<RunId> runs;
    for (int position : {1, 0}) {
        RunRecord r;
        r.name = QStringLiteral("lr-sweep[lr=%1]").arg(position);
        r.groups = {RunGroupMembership{*sweep, RunGroupKind::Sweep, position, QStringLiteral("lr=%1").arg(position)}};
        auto id = store->createRun(r, {});
        QVERIFY2(id, id ? "" : qPrintable(id.error().message));
        runs.append(*id);
    }
    const auto members = store->groupMembers(*sweep);
    QCOMPARE(members.size(), 2);
    QCOMPARE(members[0].first, runs[1]);
    QCOMPARE(members[0].second, (RunGroupMembership{*sweep, RunGroupKind::Sweep, 0, QStringLiteral("lr=0")}));
    QCOMPARE(members[1].first, runs[0]);

    // Joining later (a gang's rank 0, a pipeline's step) counts as a change of the run.
    const qint64 seq = store->runChangesSince(0)->seq;
    QVERIFY(store->joinGroup(runs[0], RunGroupMembership{*pipeline, RunGroupKind::Pipeline, 3, QStringLiteral("train")})
                    .has_value());
    QCOMPARE(store->runChangesSince(seq)->changed, QList<RunId>{runs[0]});
    const RunRecord joined = *store->run(runs[0]);
    QCOMPARE(joined.groups,
            (QList<RunGroupMembership>{
                    RunGroupMembership{*pipeline, RunGroupKind::Pipeline, 3, QStringLiteral("train")},
                    RunGroupMembership{*sweep, RunGroupKind::Sweep, 1, QStringLiteral("lr=1")}}));
    QCOMPARE(groupIdOf(joined, RunGroupKind::Sweep), *sweep);
    QCOMPARE(groupIdOf(joined, RunGroupKind::Gang), RunGroupId(0));
    // runs() and unfinishedRuns() carry them too.
    for (const QList<RunRecord>& all : {store->runs(), store->unfinishedRuns()})
        for (const RunRecord& r : all)
            QCOMPARE(r.groups.size(), r.id == runs[0] ? 2 : 1);
    // updateRun leaves them alone.
    RunRecord stale = joined;
    stale.groups.clear();
    stale.state = RunState::Running;
    store->updateRun(stale);
    QVERIFY(store->flush().has_value());
    QCOMPARE(store->run(runs[0])->groups.size(), 2);

    const auto groups = store->groups();
    QCOMPARE(groups.size(), 2);
    QCOMPARE(groups[0].kind, RunGroupKind::Pipeline);
    QCOMPARE(groups[0].runs, 1);
    QCOMPARE(groups[1], (RunGroupRecord{*sweep, RunGroupKind::Sweep, QStringLiteral("lr-sweep"), made, *pipeline, 2}));
    QCOMPARE(store->groups(RunGroupKind::Gang).size(), 0);
    QCOMPARE(store->group(*sweep)->runs, 2);
    QVERIFY(!store->group(*sweep + 100));

    // Unknown groups and runs are errors naming them; nothing is made.
    RunRecord lost;
    lost.groups = {RunGroupMembership{9999, RunGroupKind::Gang, 0, {}}};
    auto refused = store->createRun(lost, {});
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(QStringLiteral("group 9999")), qPrintable(refused.error().message));
    QCOMPARE(store->runs().size(), 2);
    auto noRun = store->joinGroup(424242, RunGroupMembership{*sweep, RunGroupKind::Sweep, 0, {}});
    QVERIFY(!noRun);
    QVERIFY2(noRun.error().message.contains(QStringLiteral("424242")), qPrintable(noRun.error().message));
    QVERIFY(!store->createGroup(RunGroupRecord{0, RunGroupKind::Sweep, QStringLiteral("x"), made, 777}));

    // A gang and a sweep go with their last run; the pipeline's group stays.
    auto gang = store->createGroup(RunGroupRecord{0, RunGroupKind::Gang, QStringLiteral("g"), made});
    QVERIFY(gang);
    QVERIFY(store->joinGroup(runs[1], RunGroupMembership{*gang, RunGroupKind::Gang, 0, {}}).has_value());
    store->deleteRun(runs[1]);
    QVERIFY(store->flush().has_value());
    QVERIFY(!store->group(*gang));
    QCOMPARE(store->group(*sweep)->runs, 1);
    store->deleteRun(runs[0]);
    QVERIFY(store->flush().has_value());
    QVERIFY(!store->group(*sweep));
    QVERIFY(store->group(*pipeline));
    QCOMPARE(store->group(*pipeline)->runs, 0);
    // Ids are never reused.
    auto next = store->createGroup(RunGroupRecord{0, RunGroupKind::Attempts, QStringLiteral("a"), {}});
    QVERIFY(next && *next > *gang);
    QVERIFY(store->group(*next)->createdAt.isValid());
}

// Issue #22: a reader in another process (the GUI beside the service) asks
// which runs changed since it last looked, and reloads only those.
void TestSqliteResultStore::changesNameTheRunsEachWriteTouched()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto a = store->createRun(RunRecord{}, {});
    auto b = store->createRun(RunRecord{}, {});
    auto c = store->createRun(RunRecord{}, {});
    QVERIFY(a.has_value() && b.has_value() && c.has_value());
    auto all = store->runChangesSince(0);
    QVERIFY2(all.has_value(), all ? "" : qPrintable(all.error().message));
    QCOMPARE(all->changed, (QList<RunId>{*a, *b, *c}));
    QVERIFY(all->removed.isEmpty());
    QVERIFY(all->seq > 0);

    // Nothing written since: nothing changed, and the number stays.
    auto none = store->runChangesSince(all->seq);
    QVERIFY(none.has_value());
    QVERIFY(none->changed.isEmpty() && none->removed.isEmpty());
    QCOMPARE(none->seq, all->seq);

    // Each kind of write names its run, and only its run.
    const auto changedBy = [&](const std::function<void()>& write) -> QList<RunId> {
        const qint64 before = store->runChangesSince(0)->seq;
        write();
        if (!store->flush())
            return {-1};
        auto after = store->runChangesSince(before);
        return after ? after->changed + after->removed : QList<RunId>{-2};
    };
    QCOMPARE(changedBy([&] { store->appendMetrics({point(*b, QStringLiteral("loss"), 1, 0.5)}); }), QList<RunId>{*b});
    QCOMPARE(changedBy([&] { store->setConsoleOffset(*c, 100); }), QList<RunId>{*c});
    QCOMPARE(changedBy([&] {
        store->setParams(*a, {{QStringLiteral("lr"), QStringLiteral("0.1")}});
    }),
            QList<RunId>{*a});
    QCOMPARE(changedBy([&] {
        store->addNotice(RunNotice{*c, QDateTime::currentDateTimeUtc(), QStringLiteral("n")});
    }),
            QList<RunId>{*c});
    RunAnnotation note;
    note.notes = QStringLiteral("best so far");
    QCOMPARE(changedBy([&] { QVERIFY(store->annotateRun(*b, note).has_value()); }), QList<RunId>{*b});
    RunRecord updated = *store->run(*a);
    updated.state = RunState::Running;
    QCOMPARE(changedBy([&] { store->updateRun(updated); }), QList<RunId>{*a});
    // A write that changes nothing (an unknown run) names nothing.
    QCOMPARE(changedBy([&] { store->setConsoleOffset(9999, 1); }), QList<RunId>{});

    // A deleted run is told apart from a changed one.
    const qint64 beforeDelete = store->runChangesSince(0)->seq;
    store->deleteRun(*b);
    store->appendMetrics({point(*c, QStringLiteral("loss"), 2, 0.25)});
    QVERIFY(store->flush().has_value());
    auto after = store->runChangesSince(beforeDelete);
    QVERIFY(after.has_value());
    QCOMPARE(after->changed, QList<RunId>{*c});
    QCOMPARE(after->removed, QList<RunId>{*b});
    QVERIFY(after->seq > beforeDelete);

    // Another process's store sees the same changes.
    auto other = openOrFail(m_path);
    QVERIFY(other);
    auto seen = other->runChangesSince(beforeDelete);
    QVERIFY(seen.has_value());
    QCOMPARE(seen->changed, QList<RunId>{*c});
    QCOMPARE(seen->removed, QList<RunId>{*b});
    QCOMPARE(seen->seq, after->seq);
}

void TestSqliteResultStore::artifactsRoundTrip()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    const QDateTime t = QDateTime(QDate(2024, 1, 2), QTime(3, 4, 5, 67), Qt::UTC);
    store->addArtifact({*id, QStringLiteral("plots/loss.png"), 2048, QStringLiteral("ab"), t});
    store->addArtifact({*id, QStringLiteral("ckpt/model.pt"), 1, QStringLiteral("old"), t});
    store->addArtifact({*id, QStringLiteral("ckpt/model.pt"), 5'000'000'000LL, QStringLiteral("new"), t.addMSecs(1)});
    QVERIFY(store->flush().has_value());
    const auto a = store->artifacts(*id);
    QCOMPARE(a.size(), 2);
    QCOMPARE(a[0].path, QStringLiteral("ckpt/model.pt"));
    QCOMPARE(a[0].size, 5'000'000'000LL);
    QCOMPARE(a[0].sha256, QStringLiteral("new"));
    QCOMPARE(a[0].createdAt.toMSecsSinceEpoch(), t.toMSecsSinceEpoch() + 1);
    QCOMPARE(a[0].createdAt.timeSpec(), Qt::UTC);
    QCOMPARE(a[1].path, QStringLiteral("plots/loss.png"));
    QCOMPARE(a[1].run, *id);
}

void TestSqliteResultStore::noticesRoundTrip()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    QSignalSpy changed(store.get(), &ResultStore::runsChanged);
    auto a = store->createRun(RunRecord{}, {});
    auto b = store->createRun(RunRecord{}, {});
    auto quiet = store->createRun(RunRecord{}, {});
    QVERIFY(a.has_value() && b.has_value() && quiet.has_value());
    QTRY_COMPARE(changed.size(), 3); // the creates' own signals
    changed.clear();
    const QDateTime t = QDateTime(QDate(2024, 3, 5), QTime(7, 14, 16, 123), Qt::UTC);
    const QString dangling
            = QStringLiteral("sync of /home/u/job to node ws1 made 1 symlink(s) that lead nowhere there: "
                             "data -> ../shared_data");
    // Added out of time order; the same millisecond twice (kept in the order added).
    store->addNotice({*a, t.addSecs(60), QStringLiteral("second: artifacts could not be listed")});
    store->addNotice({*a, t, dangling});
    store->addNotice({*a, t, QStringLiteral("same ms, added later: ünïcödé ⚠ 'quotes' \"and\" <b>markup</b>")});
    store->addNotice({*b, {}, QStringLiteral("an invalid time becomes now")});
    store->addNotice({*a, t.addSecs(120), dangling}); // the run has that text already: not repeated
    store->addNotice({*quiet + 100, t, QStringLiteral("of no run: dropped")});
    QVERIFY(store->flush().has_value());
    QTRY_VERIFY(!changed.isEmpty());
    QCoreApplication::processEvents();
    QSet<RunId> touched;
    for (const auto& args : std::as_const(changed))
        for (RunId id : args.at(0).value<QList<RunId>>())
            touched.insert(id);
    QCOMPARE(touched, (QSet<RunId>{*a, *b})); // the runs whose header shows them; not the unknown one

    const QList<RunNotice> na = store->notices(*a);
    QCOMPARE(na.size(), 3);
    QCOMPARE(na[0], (RunNotice{*a, t, dangling}));
    QCOMPARE(na[0].at.timeSpec(), Qt::UTC);
    QCOMPARE(na[1].text, QStringLiteral("same ms, added later: ünïcödé ⚠ 'quotes' \"and\" <b>markup</b>"));
    QCOMPARE(na[1].at, t);
    QCOMPARE(na[2], (RunNotice{*a, t.addSecs(60), QStringLiteral("second: artifacts could not be listed")}));
    const QList<RunNotice> nb = store->notices(*b);
    QCOMPARE(nb.size(), 1);
    QVERIFY(qAbs(nb[0].at.secsTo(QDateTime::currentDateTimeUtc())) < 60);
    QVERIFY(store->notices(*quiet).isEmpty());
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM run_notices")), 4);

    const QMap<RunId, QList<RunNotice>> all = store->allNotices();
    QCOMPARE(all.keys(), (QList<RunId>{*a, *b}));
    QCOMPARE(all.value(*a), na);
    QCOMPARE(all.value(*b), nb);

    // Another store on the file (trainyardctl beside the GUI) reads them too,
    // and they survive reopening.
    store.reset();
    auto again = openOrFail(m_path);
    QVERIFY(again);
    QCOMPARE(again->notices(*a), na);
    // They go with their run.
    again->deleteRun(*a);
    QVERIFY(again->flush().has_value());
    QVERIFY(again->notices(*a).isEmpty());
    QCOMPARE(again->allNotices().keys(), QList<RunId>{*b});
}

void TestSqliteResultStore::writesForUnknownRunsAreIgnored()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    QSignalSpy changed(store.get(), &ResultStore::runsChanged);
    QSignalSpy failures(store.get(), &ResultStore::writeFailed);
    const RunId ghost = *id + 50;
    RunRecord u;
    u.id = ghost;
    store->updateRun(u);
    store->setConsoleOffset(ghost, 10);
    store->appendMetrics({point(ghost, QStringLiteral("loss"), 0, 1.0), point(*id, QStringLiteral("loss"), 0, 2.0)});
    store->addArtifact({ghost, QStringLiteral("x"), 1, QString(), {}});
    store->setConsoleOffset(*id, 3);
    QVERIFY(store->flush().has_value());
    QTRY_VERIFY(!changed.isEmpty());
    QCoreApplication::processEvents();
    QCOMPARE(failures.size(), 0);
    for (const auto& args : std::as_const(changed))
        QCOMPARE(args.at(0).value<QList<RunId>>(), QList<RunId>{*id});
    QCOMPARE(store->metrics(*id).size(), 1);
    QVERIFY(!store->run(ghost).has_value());
    QCOMPARE(countRows(m_path, QStringLiteral("SELECT count(*) FROM metric_keys")), 1);
}

void TestSqliteResultStore::signalsAfterCommitWithIds()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    QSignalSpy changed(store.get(), &ResultStore::runsChanged);
    QSignalSpy appended(store.get(), &ResultStore::metricsAppended);
    // A receiver that reads back: it must already see the committed data, and
    // be called in the store's thread.
    QList<RunState> statesSeen;
    QList<QThread*> threadsSeen;
    ResultStore* s = store.get();
    connect(s, &ResultStore::runsChanged, this, [&](const QList<RunId>& ids) {
        threadsSeen << QThread::currentThread();
        for (RunId id : ids)
            if (auto r = s->run(id))
                statesSeen << r->state;
    });

    auto a = store->createRun(RunRecord{}, {});
    auto b = store->createRun(RunRecord{}, {});
    QVERIFY(a.has_value() && b.has_value());
    QTRY_COMPARE(changed.size(), 2); // createRun() commits at once: one batch each
    QCOMPARE(changed[0].at(0).value<QList<RunId>>(), QList<RunId>{*a});
    QCOMPARE(changed[1].at(0).value<QList<RunId>>(), QList<RunId>{*b});
    changed.clear();
    statesSeen.clear();

    RunRecord ua;
    ua.id = *a;
    ua.state = RunState::Running;
    RunRecord ub;
    ub.id = *b;
    ub.state = RunState::Cancelled;
    store->updateRun(ua);
    store->updateRun(ub);
    store->updateRun(ua);
    store->appendMetrics({point(*a, QStringLiteral("l"), 0, 1), point(*b, QStringLiteral("l"), 0, 1),
            point(*a, QStringLiteral("l"), 1, 1)});
    store->deleteRun(*b);
    QVERIFY(store->flush().has_value());
    QTRY_VERIFY(!changed.isEmpty());
    QCoreApplication::processEvents();

    QSet<RunId> ids;
    for (const auto& args : std::as_const(changed)) {
        const auto list = args.at(0).value<QList<RunId>>();
        QCOMPARE(QSet<RunId>(list.begin(), list.end()).size(), list.size()); // each id once per batch
        for (RunId id : list)
            ids.insert(id);
    }
    QCOMPARE(ids, (QSet<RunId>{*a, *b}));
    QVERIFY(statesSeen.contains(RunState::Running)); // read back inside the slot: committed
    QHash<RunId, int> counts;
    for (const auto& args : std::as_const(appended))
        counts[args.at(0).value<RunId>()] += args.at(1).toInt();
    QCOMPARE(counts.value(*a), 2);
    QVERIFY(counts.value(*b) <= 1); // 1 if committed before the delete's batch, 0 if in the same batch
    for (QThread* t : std::as_const(threadsSeen))
        QCOMPARE(t, QThread::currentThread());
}

void TestSqliteResultStore::readsFromManyThreads()
{
    auto store = openOrFail(m_path);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    std::atomic<bool> done{false};
    std::atomic<int> errors{0};
    std::atomic<int> reads{0};
    ResultStore* s = store.get();
    const RunId run = *id;
    std::vector<std::unique_ptr<QThread>> readers;
    for (int i = 0; i < 4; ++i) {
        readers.emplace_back(QThread::create([&] {
            qsizetype last = 0;
            while (!done.load()) {
                const auto pts = s->metrics(run);
                // Committed batches only ever add points; a batch appends whole chunks of 10.
                if (pts.size() < last || pts.size() % 10 != 0 || !s->run(run))
                    ++errors;
                last = pts.size();
                ++reads;
            }
        }));
        readers.back()->start();
    }
    for (int chunk = 0; chunk < 200; ++chunk) {
        QList<MetricPoint> pts;
        for (int i = 0; i < 10; ++i)
            pts << point(run, QStringLiteral("k"), chunk * 10 + i, i);
        store->appendMetrics(pts);
        if (chunk % 20 == 0)
            QThread::msleep(5);
    }
    QVERIFY(store->flush().has_value());
    QTest::qWait(20);
    done = true;
    for (auto& t : readers)
        t->wait();
    QVERIFY(reads.load() >= 4);
    QCOMPARE(errors.load(), 0);
    QCOMPARE(store->metrics(run).size(), 2000);
}

void TestSqliteResultStore::writeErrorsReported()
{
    SqliteStoreOptions impatient;
    impatient.busyTimeoutMs = 30;
    auto store = openOrFail(m_path, impatient);
    QVERIFY(store);
    auto id = store->createRun(RunRecord{}, {});
    QVERIFY(id.has_value());
    QSignalSpy failures(store.get(), &ResultStore::writeFailed);
    {
        // Another process holds the write lock for longer than the store waits.
        RawDb other(m_path);
        QVERIFY(other.exec(QStringLiteral("BEGIN IMMEDIATE")));
        store->appendMetrics({point(*id, QStringLiteral("loss"), 0, 1.0)});
        const auto flushed = store->flush();
        QVERIFY(!flushed.has_value());
        QVERIFY2(flushed.error().message.contains(m_path), qPrintable(flushed.error().message));
        QVERIFY2(flushed.error().message.contains(QStringLiteral("locked")), qPrintable(flushed.error().message));
        const auto created = store->createRun(RunRecord{}, {});
        QVERIFY(!created.has_value());
        QVERIFY(other.exec(QStringLiteral("ROLLBACK")));
    }
    QTRY_COMPARE(failures.size(), 2);
    QVERIFY(failures[0].at(0).toString().contains(QStringLiteral("rolled back")));
    // flush() reports a failed batch once: the createRun() batch that failed
    // after the previous flush(), then nothing; the store works again.
    QVERIFY(!store->flush().has_value());
    QVERIFY(store->flush().has_value());
    store->appendMetrics({point(*id, QStringLiteral("loss"), 1, 2.0)});
    QVERIFY(store->flush().has_value());
    QCOMPARE(store->metrics(*id).size(), 1);
    QCOMPARE(store->metrics(*id).first().step, qint64(1));
}

QTEST_GUILESS_MAIN(TestSqliteResultStore)
#include "TestSqliteResultStore.moc"
