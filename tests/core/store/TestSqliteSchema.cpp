// Schema versioning of the SQLite result store: new and empty files, every
// historical schema version migrated to the current one with its data intact,
// and files that must be refused without being touched.
#include "StoreTestUtil.h"
#include "tests/support/TestSupport.h"

#include "core/store/ResultStore.h"
#include "core/store/SqliteSchema.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace ty;
using ty::test::RawDb;

namespace {

// A database as an earlier Trainyard wrote it: the schema of that version,
// frozen here (never edit a released one), followed by the same sample data
// (expressed in that version's columns). Adding schema version N+1 means
// adding the version-N snapshot to this list.
struct Snapshot {
    int version;
    QStringList statements;
};

// Snapshot `version`: the previous one's statements with its schema_version
// row replaced, then `added`.
Snapshot nextSnapshot(const Snapshot& previous, const QStringList& added)
{
    const int version = previous.version + 1;
    Snapshot next{version, {}};
    const QString oldRow = QStringLiteral("'schema_version', '%1'").arg(previous.version);
    for (const QString& sql : previous.statements) {
        if (sql.contains(oldRow))
            next.statements
                    << QStringLiteral("INSERT INTO meta (key, value) VALUES ('schema_version', '%1')").arg(version);
        else
            next.statements << sql;
    }
    next.statements << added;
    return next;
}

QList<Snapshot> historicalSnapshots()
{
    QList<Snapshot> out;
    out.append(Snapshot{1,
            {
                    // --- schema v1, verbatim ---
                    QStringLiteral(
                            "CREATE TABLE meta ( key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID"),
                    QStringLiteral(
                            "CREATE TABLE runs ( id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT '',"
                            " state TEXT NOT NULL, spec_yaml TEXT NOT NULL DEFAULT '', spec_path TEXT NOT NULL DEFAULT '',"
                            " node TEXT NOT NULL DEFAULT '', gpus TEXT NOT NULL DEFAULT '[]', argv TEXT NOT NULL DEFAULT '[]',"
                            " workdir TEXT NOT NULL DEFAULT '', env TEXT NOT NULL DEFAULT '{}', priority INTEGER NOT NULL DEFAULT 0,"
                            " created_at INTEGER NOT NULL, started_at INTEGER, finished_at INTEGER, exit_code INTEGER,"
                            " exit_signal INTEGER, failure_reason TEXT NOT NULL DEFAULT '', agent_run_id TEXT NOT NULL DEFAULT '',"
                            " console_path TEXT NOT NULL DEFAULT '', console_offset INTEGER NOT NULL DEFAULT 0)"),
                    QStringLiteral("CREATE INDEX runs_created_at ON runs(created_at)"),
                    QStringLiteral(
                            "CREATE TABLE tags ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                            " tag TEXT NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (run_id, tag)) WITHOUT ROWID"),
                    QStringLiteral("CREATE INDEX tags_tag ON tags(tag)"),
                    QStringLiteral(
                            "CREATE TABLE params ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                            " key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key)) WITHOUT ROWID"),
                    QStringLiteral("CREATE TABLE metric_keys ( id INTEGER PRIMARY KEY AUTOINCREMENT,"
                                   " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, key TEXT NOT NULL,"
                                   " UNIQUE (run_id, key))"),
                    QStringLiteral(
                            "CREATE TABLE metrics ( id INTEGER PRIMARY KEY,"
                            " key_id INTEGER NOT NULL REFERENCES metric_keys(id) ON DELETE CASCADE, step INTEGER NOT NULL,"
                            " epoch REAL, wall_ms INTEGER NOT NULL, value REAL, kind INTEGER NOT NULL DEFAULT 0)"),
                    QStringLiteral("CREATE INDEX metrics_series ON metrics(key_id, step)"),
                    QStringLiteral(
                            "CREATE TABLE artifacts ( run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                            " path TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL DEFAULT '',"
                            " created_at INTEGER NOT NULL, PRIMARY KEY (run_id, path)) WITHOUT ROWID"),
                    QStringLiteral("INSERT INTO meta (key, value) VALUES ('schema_version', '1')"),
                    // --- sample data, v1 columns ---
                    QStringLiteral(
                            "INSERT INTO runs VALUES (1, 'digits-mlp', 'succeeded', 'name: digits\ncommand: python3 train.py\n',"
                            " '/home/u/digits/job.yaml', 'local', '[0,1]', '[\"python3\",\"train.py\",\"--lr\",\"0.01\"]',"
                            " '/home/u/digits', '{\"CUDA_VISIBLE_DEVICES\":\"0,1\",\"SEED\":\"7\"}', 5, 1709644455678,"
                            " 1709644456001, 1709644512345, 0, NULL, '', 'r-0001', '/data/runs/1/console.log', 4096)"),
                    QStringLiteral("INSERT INTO tags VALUES (1, 'mlp', 1), (1, 'baseline', 0)"),
                    QStringLiteral("INSERT INTO params VALUES (1, 'lr', '0.01'), (1, 'epochs', '15')"),
                    QStringLiteral("INSERT INTO metric_keys VALUES (1, 1, 'val_accuracy'), (2, 1, 'train_loss')"),
                    QStringLiteral("INSERT INTO metrics (key_id, step, epoch, wall_ms, value, kind) VALUES"
                                   " (2, 0, 0.0, 1709644457000, 2.3025, 0), (2, 1, NULL, 1709644458000, NULL, 1),"
                                   " (1, 0, 1.0, 1709644459000, 0.9528, 0), (1, 1, NULL, 1709644460000, NULL, 2),"
                                   " (1, 2, NULL, 1709644461000, 0.0, 4)"),
                    QStringLiteral("INSERT INTO artifacts VALUES (1, 'model.pt', 123456, 'ab12', 1709644512999)"),
            }});
    // Version 2 = version 1 plus the `nodes` table (SSH workstations).
    const Snapshot v2 = nextSnapshot(out.front(),
            {QStringLiteral("CREATE TABLE nodes ( name TEXT NOT NULL PRIMARY KEY, host TEXT NOT NULL,"
                            " user TEXT NOT NULL DEFAULT '', port INTEGER NOT NULL DEFAULT 0,"
                            " identity_file TEXT NOT NULL DEFAULT '', agent_path TEXT NOT NULL DEFAULT '',"
                            " added_at INTEGER NOT NULL) WITHOUT ROWID"),
                    QStringLiteral(
                            "INSERT INTO nodes VALUES ('ws1', 'gpu-box', 'alice', 2222, '/home/u/.ssh/id_ed25519',"
                            " '', 1709644400000)")});
    out.append(v2);
    // Version 3 = version 2 plus node labels.
    const Snapshot v3 = nextSnapshot(v2,
            {QStringLiteral("ALTER TABLE nodes ADD COLUMN labels TEXT NOT NULL DEFAULT '[]'"),
                    QStringLiteral("UPDATE nodes SET labels = '[\"a100\",\"nvlink\"]' WHERE name = 'ws1'")});
    out.append(v3);
    // Version 4 = version 3 plus superseded points, metric sources and restarts.
    const Snapshot v4 = nextSnapshot(v3,
            {QStringLiteral("ALTER TABLE metrics ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0"),
                    QStringLiteral("ALTER TABLE metrics ADD COLUMN source INTEGER NOT NULL DEFAULT 0"),
                    QStringLiteral("CREATE TABLE metric_restarts ( id INTEGER PRIMARY KEY,"
                                   " key_id INTEGER NOT NULL REFERENCES metric_keys(id) ON DELETE CASCADE,"
                                   " source INTEGER NOT NULL DEFAULT 0, step INTEGER NOT NULL,"
                                   " wall_ms INTEGER NOT NULL, superseded INTEGER NOT NULL)"),
                    QStringLiteral("CREATE INDEX metric_restarts_key ON metric_restarts(key_id)")});
    out.append(v4);
    // Version 5 = version 4 plus packed metric blocks.
    const Snapshot v5 = nextSnapshot(v4,
            {QStringLiteral("CREATE TABLE metric_blocks ( id INTEGER PRIMARY KEY,"
                            " key_id INTEGER NOT NULL REFERENCES metric_keys(id) ON DELETE CASCADE,"
                            " source INTEGER NOT NULL DEFAULT 0, first_id INTEGER NOT NULL,"
                            " last_id INTEGER NOT NULL, count INTEGER NOT NULL, live INTEGER NOT NULL,"
                            " first_step INTEGER NOT NULL, last_step INTEGER NOT NULL, points BLOB NOT NULL)"),
                    QStringLiteral("CREATE INDEX metric_blocks_series ON metric_blocks(key_id, source, first_id)"),
                    QStringLiteral("CREATE INDEX metric_blocks_last_id ON metric_blocks(last_id)")});
    out.append(v5);
    // Version 6 = version 5 plus the indexes of unfinished and recently ended runs.
    const Snapshot v6 = nextSnapshot(v5,
            {QStringLiteral("CREATE INDEX runs_unfinished ON runs(created_at)"
                            " WHERE state NOT IN ('succeeded', 'failed', 'cancelled')"),
                    QStringLiteral("CREATE INDEX runs_finished_at ON runs(finished_at)")});
    out.append(v6);
    // Version 7 = version 6 plus run notices, with one on the sample run.
    const Snapshot v7 = nextSnapshot(v6,
            {QStringLiteral("CREATE TABLE run_notices ( id INTEGER PRIMARY KEY,"
                            " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                            " at INTEGER NOT NULL, text TEXT NOT NULL)"),
                    QStringLiteral("CREATE INDEX run_notices_run ON run_notices(run_id, at)"),
                    QStringLiteral(
                            "INSERT INTO run_notices (run_id, at, text) VALUES (1, 1709644456500,"
                            " 'sync of /home/u/digits to node local made 1 symlink(s) that lead nowhere there')")});
    out.append(v7);
    // Version 8 = version 7 plus a run's notes and archived flag, set on the sample run.
    const Snapshot v8 = nextSnapshot(v7,
            {QStringLiteral("ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT ''"),
                    QStringLiteral("ALTER TABLE runs ADD COLUMN archived INTEGER NOT NULL DEFAULT 0"),
                    QStringLiteral("UPDATE runs SET notes = 'best lr so far', archived = 1 WHERE id = 1")});
    out.append(v8);
    // Version 9 = version 8 plus a run's failure kind and pending reason.
    const Snapshot v9 = nextSnapshot(v8,
            {QStringLiteral("ALTER TABLE runs ADD COLUMN failure_kind TEXT NOT NULL DEFAULT ''"),
                    QStringLiteral("ALTER TABLE runs ADD COLUMN pending_reason TEXT NOT NULL DEFAULT ''")});
    out.append(v9);
    // Version 10 = version 9 plus the change sequence of each run.
    const Snapshot v10 = nextSnapshot(v9,
            {QStringLiteral("CREATE TABLE run_changes ( run_id INTEGER NOT NULL PRIMARY KEY, seq INTEGER NOT NULL)"),
                    QStringLiteral("CREATE INDEX run_changes_seq ON run_changes(seq)"),
                    QStringLiteral("INSERT INTO run_changes (run_id, seq) VALUES (1, 3)")});
    out.append(v10);
    // Version 11 = version 10 plus memoized steps' entries and hits, with one
    // entry (hit once) on the sample run.
    const Snapshot v11 = nextSnapshot(v10,
            {QStringLiteral("CREATE TABLE memo_entries ( key TEXT NOT NULL UNIQUE, pipeline TEXT NOT NULL DEFAULT '',"
                            " step TEXT NOT NULL, components TEXT NOT NULL, created_at INTEGER NOT NULL,"
                            " last_hit_at INTEGER, hit_count INTEGER NOT NULL DEFAULT 0,"
                            " run_id INTEGER NOT NULL DEFAULT 0, outputs TEXT NOT NULL DEFAULT '[]',"
                            " output_params TEXT NOT NULL DEFAULT '{}', output_bytes INTEGER NOT NULL DEFAULT 0)"),
                    QStringLiteral("CREATE INDEX memo_entries_step ON memo_entries(pipeline, step, created_at)"),
                    QStringLiteral("CREATE INDEX memo_entries_created ON memo_entries(created_at)"),
                    QStringLiteral("CREATE TABLE memo_hits ( id INTEGER PRIMARY KEY,"
                                   " key TEXT NOT NULL REFERENCES memo_entries(key) ON DELETE CASCADE,"
                                   " at INTEGER NOT NULL, run_id INTEGER NOT NULL DEFAULT 0,"
                                   " pipeline TEXT NOT NULL DEFAULT '')"),
                    QStringLiteral("CREATE INDEX memo_hits_key ON memo_hits(key, at)"),
                    QStringLiteral("INSERT INTO memo_entries VALUES ('k11', 'digits', 'train',"
                                   " '{\"format\":\"trainyard-memo-1\",\"step\":\"train\"}', 1709644512000,"
                                   " 1709644600000, 1, 1, '[{\"path\":\"model.pt\",\"size\":123456,"
                                   "\"sha256\":\"ab12\"}]', '{}', 123456)"),
                    QStringLiteral("INSERT INTO memo_hits (key, at, run_id, pipeline) VALUES"
                                   " ('k11', 1709644600000, 0, 'digits')")});
    out.append(v11);
    // Version 12 = version 11 plus pipelines, with one that ended.
    const Snapshot v12 = nextSnapshot(v11,
            {QStringLiteral("CREATE TABLE pipelines ( id INTEGER PRIMARY KEY, name TEXT NOT NULL, state TEXT NOT NULL,"
                            " created_at INTEGER NOT NULL, ended_at INTEGER, document TEXT NOT NULL)"),
                    QStringLiteral("CREATE INDEX pipelines_state ON pipelines(state)"),
                    QStringLiteral("INSERT INTO pipelines VALUES (3, 'digits', 'succeeded', 1709644512000,"
                                   " 1709644600000, '{\"steps\":[]}')")});
    out.append(v12);
    // Version 13 = version 12 plus run groups; the ended pipeline has its group.
    const Snapshot v13 = nextSnapshot(v12,
            {QStringLiteral("ALTER TABLE runs ADD COLUMN not_before INTEGER"),
                    QStringLiteral("CREATE TABLE run_groups ( id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,"
                                   " name TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL,"
                                   " parent INTEGER REFERENCES run_groups(id) ON DELETE SET NULL)"),
                    QStringLiteral("CREATE INDEX run_groups_kind ON run_groups(kind, id)"),
                    QStringLiteral("CREATE TABLE run_group_members ("
                                   " group_id INTEGER NOT NULL REFERENCES run_groups(id) ON DELETE CASCADE,"
                                   " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                                   " position INTEGER NOT NULL DEFAULT 0, role TEXT NOT NULL DEFAULT '',"
                                   " PRIMARY KEY (group_id, run_id)) WITHOUT ROWID"),
                    QStringLiteral("CREATE INDEX run_group_members_run ON run_group_members(run_id)"),
                    QStringLiteral("INSERT INTO run_groups VALUES (3, 'pipeline', 'digits', 1709644512000, NULL)")});
    out.append(v13);
    // Version 14 = version 13 plus node kinds and facts and a run's Slurm job (issue #26).
    const Snapshot v14 = nextSnapshot(v13,
            {QStringLiteral("ALTER TABLE nodes ADD COLUMN kind TEXT NOT NULL DEFAULT 'ssh'"),
                    QStringLiteral("ALTER TABLE nodes ADD COLUMN facts TEXT NOT NULL DEFAULT ''"),
                    QStringLiteral("ALTER TABLE runs ADD COLUMN slurm_job TEXT NOT NULL DEFAULT ''")});
    out.append(v14);
    // Version 15 = version 14 plus node_lost_after per node (issue #25).
    const Snapshot v15 = nextSnapshot(v14, {QStringLiteral("ALTER TABLE nodes ADD COLUMN node_lost_after INTEGER")});
    out.append(v15);
    return out;
}

QDateTime utcMs(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
}

// Checks the sample data every snapshot holds, read back through the store.
void verifySample(ResultStore& store)
{
    auto run = store.run(1);
    QVERIFY2(run.has_value(), run ? "" : qPrintable(run.error().message));
    QCOMPARE(run->name, QStringLiteral("digits-mlp"));
    QCOMPARE(run->state, RunState::Succeeded);
    QCOMPARE(run->specYaml, QStringLiteral("name: digits\ncommand: python3 train.py\n"));
    QCOMPARE(run->specPath, QStringLiteral("/home/u/digits/job.yaml"));
    QCOMPARE(run->node, QStringLiteral("local"));
    QCOMPARE(run->gpus, (QList<int>{0, 1}));
    QCOMPARE(run->argv,
            (QStringList{QStringLiteral("python3"), QStringLiteral("train.py"), QStringLiteral("--lr"),
                    QStringLiteral("0.01")}));
    QCOMPARE(run->workdir, QStringLiteral("/home/u/digits"));
    QCOMPARE(run->env.value(QStringLiteral("CUDA_VISIBLE_DEVICES")), QStringLiteral("0,1"));
    QCOMPARE(run->env.value(QStringLiteral("SEED")), QStringLiteral("7"));
    QCOMPARE(run->env.size(), 2);
    QCOMPARE(run->priority, 5);
    QCOMPARE(run->createdAt, utcMs(1709644455678));
    QCOMPARE(run->createdAt.timeSpec(), Qt::UTC);
    QCOMPARE(run->startedAt, utcMs(1709644456001));
    QCOMPARE(run->finishedAt, utcMs(1709644512345));
    QCOMPARE(run->exitCode, std::optional<int>(0));
    QCOMPARE(run->exitSignal, std::optional<int>());
    QCOMPARE(run->agentRunId, QStringLiteral("r-0001"));
    QCOMPARE(run->consolePath, QStringLiteral("/data/runs/1/console.log"));
    QCOMPARE(run->consoleOffset, qint64(4096));
    QCOMPARE(run->tags, (QStringList{QStringLiteral("baseline"), QStringLiteral("mlp")}));

    const auto params = store.params(1);
    QCOMPARE(params.size(), 2);
    QCOMPARE(params.value(QStringLiteral("lr")), QStringLiteral("0.01"));
    QCOMPARE(params.value(QStringLiteral("epochs")), QStringLiteral("15"));

    const auto points = store.metrics(1);
    QCOMPARE(points.size(), 5);
    QCOMPARE(points[0].key, QStringLiteral("train_loss"));
    QCOMPARE(points[0].value, 2.3025);
    QCOMPARE(points[0].epoch, std::optional<double>(0.0));
    QCOMPARE(points[0].wallTimeMs, qint64(1709644457000));
    QVERIFY(std::isnan(points[1].value));
    QCOMPARE(points[1].epoch, std::optional<double>());
    QCOMPARE(points[2].key, QStringLiteral("val_accuracy"));
    QCOMPARE(points[2].value, 0.9528);
    QVERIFY(std::isinf(points[3].value) && points[3].value > 0);
    QVERIFY(points[4].value == 0.0 && std::signbit(points[4].value));

    const auto artifacts = store.artifacts(1);
    QCOMPARE(artifacts.size(), 1);
    QCOMPARE(artifacts[0].path, QStringLiteral("model.pt"));
    QCOMPARE(artifacts[0].size, qint64(123456));
    QCOMPARE(artifacts[0].sha256, QStringLiteral("ab12"));
    QCOMPARE(artifacts[0].createdAt, utcMs(1709644512999));
}

bool writeSnapshot(const QString& path, const Snapshot& s, const QString& journalMode, QString* error)
{
    RawDb raw(path);
    if (!raw.isOpen()) {
        *error = raw.error();
        return false;
    }
    bool ok = raw.exec(QStringLiteral("PRAGMA journal_mode=%1").arg(journalMode));
    for (const QString& sql : s.statements)
        ok = ok && raw.exec(sql);
    if (!ok)
        *error = raw.error();
    return ok;
}

struct FileState {
    QByteArray bytes;
    QDateTime modified;
    QStringList dirEntries;
    bool operator==(const FileState&) const = default;
};

FileState fileState(const QString& path)
{
    FileState s;
    QFile f(path);
    if (f.open(QIODevice::ReadOnly))
        s.bytes = f.readAll();
    s.modified = QFileInfo(path).lastModified();
    s.dirEntries = QFileInfo(path).dir().entryList(QDir::Files | QDir::Hidden, QDir::Name);
    return s;
}

} // namespace

class TestSqliteSchema final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void createsMissingFileAndDirectories();
    void migratesEmptyFile();
    void migratesHistoricalVersions_data();
    void migratesHistoricalVersions();
    void refusesNewerSchemaUntouched_data();
    void refusesNewerSchemaUntouched();
    void refusesNonSqliteFile();
    void refusesCorruptSqliteFile();
    void refusesForeignSqliteDatabase();
    void refusesDirectory();
    void historicalSnapshotsCoverEveryVersion();
    void v8ReasonsAreSplitIntoKindDetailAndPending();
    void v12TagsBecomeRunGroups();

private:
    QTemporaryDir m_tmp;
};

void TestSqliteSchema::createsMissingFileAndDirectories()
{
    const QString path = m_tmp.filePath(QStringLiteral("new/sub/dir/results.db"));
    auto store = ResultStore::open(path);
    QVERIFY2(store.has_value(), store ? "" : qPrintable(store.error().message));
    QCOMPARE((*store)->schemaVersion(), SqliteSchema::kCurrentVersion);
    QCOMPARE((*store)->location(), path);
    QVERIFY(QFileInfo::exists(path));
    QVERIFY((*store)->runs().isEmpty());

    RawDb raw(path, true);
    QCOMPARE(raw.scalar(QStringLiteral("PRAGMA journal_mode")).toString(), QStringLiteral("wal"));
    QCOMPARE(raw.scalar(QStringLiteral("SELECT value FROM meta WHERE key = 'schema_version'")).toString(),
            QString::number(SqliteSchema::kCurrentVersion));
    const QStringList fp = ty::test::schemaFingerprint(path);
    for (const char* table : {"meta", "runs", "tags", "params", "metric_keys", "metrics", "artifacts", "nodes",
                 "run_notices", "memo_entries", "memo_hits"})
        QVERIFY2(fp.filter(QStringLiteral("table %1").arg(QLatin1String(table))).size() >= 1, table);
    QVERIFY(fp.contains(QStringLiteral("index metrics metrics_series|0|c|0 (key_id,step)")));
    QVERIFY(fp.contains(QStringLiteral("fk metrics metric_keys|key_id|id|NO ACTION|CASCADE")));
    QVERIFY(fp.contains(
            QStringLiteral("fk run_notices runs|run_id|id|NO ACTION|CASCADE"))); // notices go with their run
    QVERIFY(fp.contains(
            QStringLiteral("fk memo_hits memo_entries|key|key|NO ACTION|CASCADE"))); // hits go with their entry
}

void TestSqliteSchema::migratesEmptyFile()
{
    const QString path = m_tmp.filePath(QStringLiteral("empty.db"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
    }
    QCOMPARE(QFileInfo(path).size(), 0);
    {
        auto store = ResultStore::open(path);
        QVERIFY2(store.has_value(), store ? "" : qPrintable(store.error().message));
        QCOMPARE((*store)->schemaVersion(), SqliteSchema::kCurrentVersion);
        // Usable at once.
        RunRecord r;
        r.name = QStringLiteral("first");
        auto id = (*store)->createRun(r, {});
        QVERIFY(id.has_value());
        QCOMPARE(*id, RunId(1));
    }
    // Reopening a current database migrates nothing and keeps the data.
    auto again = ResultStore::open(path);
    QVERIFY(again.has_value());
    QCOMPARE((*again)->runs().size(), 1);
}

void TestSqliteSchema::migratesHistoricalVersions_data()
{
    QTest::addColumn<int>("index");
    const auto snapshots = historicalSnapshots();
    for (int i = 0; i < snapshots.size(); ++i) {
        const QByteArray name = "v" + QByteArray::number(snapshots[i].version);
        const QByteArray deleteTag = name + "-delete-journal";
        const QByteArray walTag = name + "-wal";
        QTest::newRow(deleteTag.constData()) << i;
        QTest::newRow(walTag.constData()) << i;
    }
}

void TestSqliteSchema::migratesHistoricalVersions()
{
    QFETCH(int, index);
    const Snapshot snapshot = historicalSnapshots().at(index);
    const bool wal = QByteArray(QTest::currentDataTag()).endsWith("wal");
    const QString path = m_tmp.filePath(QStringLiteral("old-%1-%2.db").arg(snapshot.version).arg(wal));
    QString error;
    QVERIFY2(writeSnapshot(path, snapshot, wal ? QStringLiteral("WAL") : QStringLiteral("DELETE"), &error),
            qPrintable(error));

    // The reference: what a brand-new database looks like.
    const QString fresh = m_tmp.filePath(QStringLiteral("fresh-%1-%2.db").arg(snapshot.version).arg(wal));
    QVERIFY(ResultStore::open(fresh).has_value());

    {
        auto store = ResultStore::open(path);
        QVERIFY2(store.has_value(), store ? "" : qPrintable(store.error().message));
        QCOMPARE((*store)->schemaVersion(), SqliteSchema::kCurrentVersion);
        verifySample(**store);
        if (QTest::currentTestFailed())
            return;
        // Every stored point is kept and current after the migration to v4.
        const QList<MetricPoint> all = (*store)->allMetrics(1);
        QCOMPARE(all.size(), 5);
        for (const MetricPoint& p : all) {
            QVERIFY(!p.superseded);
            QCOMPARE(p.source, MetricSource::Console);
        }
        QVERIFY((*store)->metricRestarts(1).isEmpty());
        // Going back on a migrated series supersedes its old points.
        (*store)->appendMetrics({MetricPoint{1, QStringLiteral("train_loss"), 0, std::nullopt, 1709644470000, 1.5}});
        QVERIFY((*store)->flush().has_value());
        QCOMPARE((*store)->metrics(1, QStringLiteral("train_loss")).size(), 1);
        QCOMPARE((*store)->allMetrics(1, QStringLiteral("train_loss")).size(), 3);
        QCOMPARE((*store)->metricRestarts(1).size(), 1);
        QCOMPARE((*store)->metricRestarts(1).front().superseded, 2);
        // Nodes: none before version 2; the sample node from version 2 on.
        const QList<NodeRecord> nodes = (*store)->nodes();
        if (snapshot.version < 2) {
            QVERIFY(nodes.isEmpty());
        } else {
            QCOMPARE(nodes.size(), 1);
            QCOMPARE(nodes[0].name, QStringLiteral("ws1"));
            QCOMPARE(nodes[0].host, QStringLiteral("gpu-box"));
            QCOMPARE(nodes[0].user, QStringLiteral("alice"));
            QCOMPARE(nodes[0].port, 2222);
            QCOMPARE(nodes[0].identityFile, QStringLiteral("/home/u/.ssh/id_ed25519"));
            QCOMPARE(nodes[0].agentPath, QString());
            const QStringList expectedLabels = snapshot.version >= 3
                    ? QStringList{QStringLiteral("a100"), QStringLiteral("nvlink")}
                    : QStringList();
            QCOMPARE(nodes[0].labels, expectedLabels);
            QCOMPARE(nodes[0].addedAt, utcMs(1709644400000));
            QCOMPARE(nodes[0].kind, NodeKind::Ssh); // every node before schema 14 was a workstation
            QCOMPARE(nodes[0].facts, QString());
            QCOMPARE(nodes[0].nodeLostAfterSec, std::optional<qint64>()); // the service's, before schema 15
        }
        // Writable: add, replace and remove nodes.
        NodeRecord n{QStringLiteral("ws9"), QStringLiteral("host9"), {}, 0, {}, {}, utcMs(1709644500000)};
        QVERIFY((*store)->addNode(n).has_value());
        QCOMPARE((*store)->nodes().back().labels, QStringList()); // migrated rows and new ones: no labels
        n.port = 2200;
        n.labels = {QStringLiteral("a100"), QStringLiteral("big memory")};
        QVERIFY((*store)->addNode(n).has_value());
        QCOMPARE((*store)->nodes().back(), n);
        // A Slurm node keeps its kind; its facts are the engine's to set.
        n.kind = NodeKind::Slurm;
        QVERIFY((*store)->addNode(n).has_value());
        (*store)->setNodeFacts(QStringLiteral("ws9"), QStringLiteral("{\"version\":\"22.05.8\"}"));
        (*store)->setNodeFacts(QStringLiteral("no-such-node"), QStringLiteral("{}"));
        QVERIFY((*store)->flush().has_value());
        QCOMPARE((*store)->nodes().back().kind, NodeKind::Slurm);
        QCOMPARE((*store)->nodes().back().facts, QStringLiteral("{\"version\":\"22.05.8\"}"));
        // Its own node_lost_after (schema 15), kept as set and cleared again.
        n.facts = (*store)->nodes().back().facts;
        n.nodeLostAfterSec = 1800;
        QVERIFY((*store)->addNode(n).has_value());
        QCOMPARE((*store)->nodes().back(), n);
        n.nodeLostAfterSec.reset();
        QVERIFY((*store)->addNode(n).has_value());
        QCOMPARE((*store)->nodes().back().nodeLostAfterSec, std::optional<qint64>());
        QCOMPARE((*store)->nodes().size(), snapshot.version < 2 ? 1 : 2);
        QVERIFY((*store)->removeNode(QStringLiteral("ws9")).has_value());
        QVERIFY(!(*store)->removeNode(QStringLiteral("ws9")).has_value());
        QCOMPARE((*store)->nodes().size(), snapshot.version < 2 ? 0 : 1);
        // Notices: none before version 7 (a migrated run starts without any),
        // the stored one from version 7 on; either way new ones can be added.
        const QList<RunNotice> notices = (*store)->notices(1);
        if (snapshot.version < 7) {
            QVERIFY(notices.isEmpty());
            QVERIFY((*store)->allNotices().isEmpty());
        } else {
            QCOMPARE(notices.size(), 1);
            QCOMPARE(notices[0].run, RunId(1));
            QCOMPARE(notices[0].at, utcMs(1709644456500));
            QCOMPARE(notices[0].text,
                    QStringLiteral("sync of /home/u/digits to node local made 1 symlink(s) that lead nowhere there"));
        }
        // Notes and archived: empty and off before version 8, as stored from it on.
        QCOMPARE((*store)->run(1)->notes, snapshot.version < 8 ? QString() : QStringLiteral("best lr so far"));
        QCOMPARE((*store)->run(1)->archived, snapshot.version >= 8);
        (*store)->addNotice(RunNotice{1, utcMs(1709644513000), QStringLiteral("after the migration")});
        QVERIFY((*store)->flush().has_value());
        QCOMPARE((*store)->notices(1).size(), snapshot.version < 7 ? 1 : 2);
        QCOMPARE((*store)->notices(1).constLast().text, QStringLiteral("after the migration"));
        // Memo entries: none before version 11, the stored one (with its hit)
        // from version 11 on; either way entries can be stored, hit and removed.
        const QList<MemoEntryRecord> memo = (*store)->memoEntries();
        if (snapshot.version < 11) {
            QVERIFY(memo.isEmpty());
        } else {
            QCOMPARE(memo.size(), 1);
            QCOMPARE(memo[0].key, QStringLiteral("k11"));
            QCOMPARE(memo[0].pipeline, QStringLiteral("digits"));
            QCOMPARE(memo[0].step, QStringLiteral("train"));
            QCOMPARE(memo[0].createdAt, utcMs(1709644512000));
            QCOMPARE(memo[0].lastHitAt, utcMs(1709644600000));
            QCOMPARE(memo[0].hitCount, qint64(1));
            QCOMPARE(memo[0].run, RunId(1));
            QCOMPARE(memo[0].outputBytes, qint64(123456));
            QCOMPARE((*store)->memoHits(QStringLiteral("k11")).size(), 1);
        }
        MemoEntryRecord entry;
        entry.key = QStringLiteral("after");
        entry.step = QStringLiteral("eval");
        entry.components = QStringLiteral("{}");
        entry.createdAt = utcMs(1709644700000);
        QVERIFY((*store)->putMemoEntry(entry).has_value());
        QVERIFY((*store)->recordMemoHit(MemoHitRecord{QStringLiteral("after"), utcMs(1709644800000), 1, {}})
                        .has_value());
        QCOMPARE((*store)->memoEntry(QStringLiteral("after"))->hitCount, qint64(1));
        QVERIFY((*store)->removeMemoEntries({QStringLiteral("after")}).has_value());
        QCOMPARE((*store)->memoEntries().size(), snapshot.version < 11 ? 0 : 1);
        // Pipelines: none before version 12, the ended one from it on; either
        // way one can be stored, and read back running and then ended.
        const QList<PipelineRecord> pipelines = (*store)->pipelines();
        if (snapshot.version < 12) {
            QVERIFY(pipelines.isEmpty());
        } else {
            QCOMPARE(pipelines.size(), 1);
            QCOMPARE(pipelines[0],
                    (PipelineRecord{3, QStringLiteral("digits"), QStringLiteral("succeeded"), utcMs(1709644512000),
                            utcMs(1709644600000), QStringLiteral("{\"steps\":[]}")}));
        }
        PipelineRecord running{
                7, QStringLiteral("p"), QStringLiteral("running"), utcMs(1709644700000), {}, QStringLiteral("{}")};
        (*store)->putPipeline(running);
        QVERIFY((*store)->flush().has_value());
        QCOMPARE((*store)->pipelines(/*runningOnly=*/true), QList<PipelineRecord>{running});
        running.state = QStringLiteral("failed");
        running.endedAt = utcMs(1709644800000);
        (*store)->putPipeline(running);
        QVERIFY((*store)->flush().has_value());
        QVERIFY((*store)->pipelines(true).isEmpty());
        QCOMPARE((*store)->pipeline(7), std::optional<PipelineRecord>(running));
        QCOMPARE((*store)->pipelines().size(), snapshot.version < 12 ? 1 : 2);
        // Every pipeline has its run group of the same id (v13).
        QCOMPARE((*store)->group(7)->kind, RunGroupKind::Pipeline);
        QCOMPARE((*store)->group(7)->name, QStringLiteral("p"));
        if (snapshot.version >= 12)
            QCOMPARE(*(*store)->group(3),
                    (RunGroupRecord{3, RunGroupKind::Pipeline, QStringLiteral("digits"), utcMs(1709644512000), 0, 0}));
        QVERIFY(!(*store)->pipeline(99));
        // Writable after the migration; ids continue after the old ones.
        RunRecord r;
        r.name = QStringLiteral("after-migration");
        auto id = (*store)->createRun(r, {{QStringLiteral("k"), QStringLiteral("v")}});
        QVERIFY2(id.has_value(), id ? "" : qPrintable(id.error().message));
        QVERIFY(*id > 1);
        (*store)->appendMetrics({MetricPoint{*id, QStringLiteral("loss"), 0, std::nullopt, 1, 0.5}});
        QVERIFY((*store)->flush().has_value());
        QCOMPARE((*store)->metrics(*id).size(), 1);
    }
    QCOMPARE(ty::test::schemaFingerprint(path), ty::test::schemaFingerprint(fresh));
    RawDb raw(path, true);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT value FROM meta WHERE key = 'schema_version'")).toString(),
            QString::number(SqliteSchema::kCurrentVersion));
    QCOMPARE(raw.scalar(QStringLiteral("PRAGMA journal_mode")).toString(), QStringLiteral("wal"));
    QCOMPARE(raw.rows(QStringLiteral("PRAGMA foreign_key_check")), QStringList());
    QCOMPARE(raw.scalar(QStringLiteral("PRAGMA integrity_check")).toString(), QStringLiteral("ok"));
}

void TestSqliteSchema::refusesNewerSchemaUntouched_data()
{
    QTest::addColumn<QString>("journalMode");
    QTest::newRow("delete-journal") << QStringLiteral("DELETE");
    QTest::newRow("wal") << QStringLiteral("WAL");
}

void TestSqliteSchema::refusesNewerSchemaUntouched()
{
    QFETCH(QString, journalMode);
    const int newer = SqliteSchema::kCurrentVersion + 1;
    QTemporaryDir dir; // alone in its directory, so stray -wal/-shm files show
    const QString path = dir.filePath(QStringLiteral("future.db"));
    QString error;
    QVERIFY2(writeSnapshot(path, historicalSnapshots().constLast(), journalMode, &error), qPrintable(error));
    {
        RawDb raw(path);
        QVERIFY(raw.exec(QStringLiteral("UPDATE meta SET value = '%1' WHERE key = 'schema_version'").arg(newer)));
        QVERIFY(raw.exec(QStringLiteral("CREATE TABLE future_things (id INTEGER PRIMARY KEY, x BLOB)")));
    }
    const FileState before = fileState(path);
    QVERIFY(!before.bytes.isEmpty());
    QVERIFY(before.dirEntries.contains(QStringLiteral("future.db")));
    QTest::qWait(20); // a write now would show in the mtime

    auto store = ResultStore::open(path);
    QVERIFY(!store.has_value());
    const QString message = store.error().message;
    QVERIFY2(message.contains(path), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("schema version %1").arg(newer)), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("up to %1").arg(SqliteSchema::kCurrentVersion)), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("newer Trainyard")), qPrintable(message));

    const FileState after = fileState(path);
    QCOMPARE(after.dirEntries, before.dirEntries);
    QCOMPARE(after.modified, before.modified);
    QVERIFY(after.bytes == before.bytes);

    // Refused again the second time: nothing was half-migrated.
    auto again = ResultStore::open(path);
    QVERIFY(!again.has_value());
    QVERIFY(fileState(path) == before);
}

void TestSqliteSchema::refusesNonSqliteFile()
{
    const QString path = m_tmp.filePath(QStringLiteral("notes.txt"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (int i = 0; i < 200; ++i)
            f.write("epoch 3 loss=0.25 this is a text file, not a database\n");
    }
    const FileState before = fileState(path);
    auto store = ResultStore::open(path);
    QVERIFY(!store.has_value());
    QVERIFY2(store.error().message.contains(path), qPrintable(store.error().message));
    QVERIFY2(store.error().message.contains(QStringLiteral("not an SQLite 3 database")),
            qPrintable(store.error().message));
    QVERIFY(fileState(path) == before);
}

void TestSqliteSchema::refusesCorruptSqliteFile()
{
    // The right magic string, garbage after it.
    const QString path = m_tmp.filePath(QStringLiteral("corrupt.db"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QByteArray data("SQLite format 3", 16);
        for (int i = 0; data.size() < 8192; ++i)
            data.append(char((i * 7919) & 0xff));
        f.write(data);
    }
    const FileState before = fileState(path);
    auto store = ResultStore::open(path);
    QVERIFY(!store.has_value());
    QVERIFY2(store.error().message.contains(path), qPrintable(store.error().message));
    QVERIFY(fileState(path).bytes == before.bytes);
}

void TestSqliteSchema::refusesForeignSqliteDatabase()
{
    const QString path = m_tmp.filePath(QStringLiteral("someone-else.sqlite"));
    {
        RawDb raw(path);
        QVERIFY(raw.exec(QStringLiteral("CREATE TABLE bookmarks (url TEXT)")));
        QVERIFY(raw.exec(QStringLiteral("INSERT INTO bookmarks VALUES ('https://example.org')")));
    }
    const FileState before = fileState(path);
    auto store = ResultStore::open(path);
    QVERIFY(!store.has_value());
    QVERIFY2(store.error().message.contains(path), qPrintable(store.error().message));
    QVERIFY2(store.error().message.contains(QStringLiteral("not a Trainyard result database")),
            qPrintable(store.error().message));
    QVERIFY(fileState(path) == before);
}

void TestSqliteSchema::refusesDirectory()
{
    const QString path = m_tmp.filePath(QStringLiteral("a-directory"));
    QVERIFY(QDir().mkpath(path));
    auto store = ResultStore::open(path);
    QVERIFY(!store.has_value());
    QVERIFY2(store.error().message.contains(path), qPrintable(store.error().message));
}

void TestSqliteSchema::historicalSnapshotsCoverEveryVersion()
{
    // Every released version below the current one, and the current one
    // itself (its snapshot also checks that fresh == migrated).
    QList<int> versions;
    for (const auto& s : historicalSnapshots())
        versions << s.version;
    for (int v = 1; v <= SqliteSchema::kCurrentVersion; ++v)
        QVERIFY2(versions.contains(v), qPrintable(QStringLiteral("no snapshot of schema version %1").arg(v)));
}

// Issue #22: a v8 database kept a queued run's reason to wait in
// failure_reason. Migrated, that is its pending reason; ended runs get a
// failure kind only where the stored text says it for certain.
void TestSqliteSchema::v8ReasonsAreSplitIntoKindDetailAndPending()
{
    Snapshot v8{0, {}};
    for (const Snapshot& s : historicalSnapshots())
        if (s.version == 8)
            v8 = s;
    QCOMPARE(v8.version, 8);
    const QString cols = QStringLiteral(
            "INSERT INTO runs (id, name, state, created_at, exit_code, exit_signal, failure_reason) VALUES ");
    v8.statements << cols
                    + QStringLiteral(
                            "(2, 'waits', 'queued', 1709644455000, NULL, NULL, 'waiting: needs 2 GPUs; best node local has 1')")
                  << cols + QStringLiteral("(3, 'paused', 'held', 1709644455000, NULL, NULL, 'held by user')")
                  << cols + QStringLiteral("(4, 'exits', 'failed', 1709644455000, 3, NULL, 'exit code 3')")
                  << cols
                    + QStringLiteral(
                            "(5, 'oom', 'failed', 1709644455000, 1, NULL, 'CUDA out of memory (torch.OutOfMemoryError)')")
                  << cols + QStringLiteral("(6, 'stopped', 'cancelled', 1709644455000, NULL, 15, 'cancelled')")
                  << cols + QStringLiteral("(7, 'killed', 'failed', 1709644455000, NULL, 9, 'killed by signal 9')");
    const QString path = m_tmp.filePath(QStringLiteral("v8-reasons.db"));
    QString error;
    QVERIFY2(writeSnapshot(path, v8, QStringLiteral("WAL"), &error), qPrintable(error));
    {
        auto store = ResultStore::open(path);
        QVERIFY2(store.has_value(), store ? "" : qPrintable(store.error().message));
        QCOMPARE((*store)->schemaVersion(), SqliteSchema::kCurrentVersion);
        const auto run = [&](RunId id) { return *(*store)->run(id); };
        QCOMPARE(run(2).pendingReason, QStringLiteral("waiting: needs 2 GPUs; best node local has 1"));
        QCOMPARE(run(2).failureReason, QString());
        QCOMPARE(run(2).failureKind, FailureKind::None);
        QCOMPARE(run(3).pendingReason, QStringLiteral("held by user"));
        QCOMPARE(run(3).failureReason, QString());
        QCOMPARE(run(4).failureKind, FailureKind::ExitCode);
        QCOMPARE(run(4).failureReason, QStringLiteral("exit code 3"));
        QCOMPARE(run(4).pendingReason, QString());
        // Not recognisable for certain from v8's text alone: the detail is kept, the kind left unknown.
        QCOMPARE(run(5).failureKind, FailureKind::None);
        QCOMPARE(run(5).failureReason, QStringLiteral("CUDA out of memory (torch.OutOfMemoryError)"));
        QCOMPARE(run(6).failureKind, FailureKind::Cancelled);
        QCOMPARE(run(7).failureKind, FailureKind::Signal);
        QCOMPARE(run(1).failureKind, FailureKind::None); // the succeeded sample run
        // Written back and read again (the new columns are the writer's too).
        RunRecord r = run(5);
        r.failureKind = FailureKind::CudaOutOfMemory;
        r.pendingReason.clear();
        (*store)->updateRun(r);
        QVERIFY((*store)->flush().has_value());
        QCOMPARE(run(5).failureKind, FailureKind::CudaOutOfMemory);
    }
    RawDb raw(path, true);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT failure_kind FROM runs WHERE id = 5")).toString(),
            QStringLiteral("cuda_oom"));
    QCOMPARE(raw.scalar(QStringLiteral("SELECT pending_reason FROM runs WHERE id = 3")).toString(),
            QStringLiteral("held by user"));
    QCOMPARE(raw.scalar(QStringLiteral("SELECT failure_reason FROM runs WHERE id = 3")).toString(), QString());
}

// Issue #24: until v12 a sweep and a gang were a tag each and a pipeline's
// runs were tagged with it and their step. Migrated, each is a run group
// with its runs in order, and those tags are gone; the user's own stay.
void TestSqliteSchema::v12TagsBecomeRunGroups()
{
    Snapshot v12{0, {}};
    for (const Snapshot& s : historicalSnapshots())
        if (s.version == 12)
            v12 = s;
    QCOMPARE(v12.version, 12);
    const QString runs = QStringLiteral("INSERT INTO runs (id, name, state, created_at) VALUES ");
    v12.statements << runs + QStringLiteral("(2, 'mlp[lr=0.1]', 'succeeded', 1709644460000)")
                   << runs + QStringLiteral("(3, 'mlp[lr=0.01]', 'failed', 1709644460000)")
                   << runs + QStringLiteral("(4, 'ddp', 'succeeded', 1709644470000)")
                   << runs + QStringLiteral("(5, 'ddp#rank1', 'succeeded', 1709644471000)")
                   << runs + QStringLiteral("(6, 'digits/train', 'succeeded', 1709644480000)")
                   << runs + QStringLiteral("(7, 'digits/eval[ds=a]', 'succeeded', 1709644490000)")
                   << runs + QStringLiteral("(8, 'mine', 'succeeded', 1709644400000)")
                   << QStringLiteral("INSERT INTO tags VALUES (2, 'baseline', 0), (2, 'sweep:1709644459000', 1),"
                                     " (3, 'sweep:1709644459000', 0), (4, 'gang:4', 0), (5, 'gang:4', 0),"
                                     " (6, 'pipeline:3', 0), (6, 'step:train', 1), (7, 'pipeline:3', 0),"
                                     " (7, 'step:eval', 1), (8, 'sweep:later', 0), (8, 'step:x', 1)");
    const QString path = m_tmp.filePath(QStringLiteral("v12-tags.db"));
    QString error;
    QVERIFY2(writeSnapshot(path, v12, QStringLiteral("WAL"), &error), qPrintable(error));
    auto store = ResultStore::open(path);
    QVERIFY2(store.has_value(), store ? "" : qPrintable(store.error().message));
    ResultStore& s = **store;
    // The pipeline keeps its id; the sweep and the gang follow, oldest first.
    const QList<RunGroupRecord> groups = s.groups();
    QCOMPARE(groups,
            (QList<RunGroupRecord>{
                    {3, RunGroupKind::Pipeline, QStringLiteral("digits"), utcMs(1709644512000), 0, 2},
                    {4, RunGroupKind::Sweep, QStringLiteral("mlp"), utcMs(1709644460000), 0, 2},
                    {5, RunGroupKind::Gang, QStringLiteral("ddp"), utcMs(1709644470000), 0, 2},
            }));
    using Members = QList<std::pair<RunId, RunGroupMembership>>;
    QCOMPARE(s.groupMembers(3),
            (Members{{6, {3, RunGroupKind::Pipeline, 0, QStringLiteral("train")}},
                    {7, {3, RunGroupKind::Pipeline, 1, QStringLiteral("eval[ds=a]")}}}));
    QCOMPARE(s.groupMembers(4),
            (Members{{2, {4, RunGroupKind::Sweep, 0, QStringLiteral("lr=0.1")}},
                    {3, {4, RunGroupKind::Sweep, 1, QStringLiteral("lr=0.01")}}}));
    QCOMPARE(s.groupMembers(5), (Members{{4, {5, RunGroupKind::Gang, 0, {}}}, {5, {5, RunGroupKind::Gang, 1, {}}}}));
    // The tags the groups replace are gone; the user's stay, even ones that
    // look like the engine's.
    QCOMPARE(s.run(2)->tags, QStringList{QStringLiteral("baseline")});
    QCOMPARE(s.run(6)->tags, QStringList());
    QCOMPARE(s.run(8)->tags, (QStringList{QStringLiteral("sweep:later"), QStringLiteral("step:x")}));
    QCOMPARE(s.run(8)->groups, QList<RunGroupMembership>());
    QCOMPARE(s.run(5)->groups, (QList<RunGroupMembership>{{5, RunGroupKind::Gang, 1, {}}}));
    // New groups are numbered after them.
    auto next = s.createGroup(RunGroupRecord{0, RunGroupKind::Sweep, QStringLiteral("new"), {}});
    QVERIFY(next);
    QCOMPARE(*next, RunGroupId(6));
}

QTEST_GUILESS_MAIN(TestSqliteSchema)
#include "TestSqliteSchema.moc"
