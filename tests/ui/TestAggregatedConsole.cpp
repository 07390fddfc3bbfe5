// The aggregated console view: merged, tagged lines from real console files,
// text/regex/level filters, saved filters (QSettings), follow mode on a live
// run, and the model under QAbstractItemModelTester.
#include "core/logs/StderrRanges.h"
#include "ui/console/AggregatedConsoleModel.h"
#include "ui/console/AggregatedConsoleView.h"
#include "core/logs/ConsoleTimes.h"

#include "tests/support/TestSupport.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

using namespace ty;

namespace {

bool writeFile(const QString& path, const QByteArray& bytes, QIODevice::OpenMode mode = QIODevice::Truncate)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly | mode) && f.write(bytes) == bytes.size();
}

RunRecord finishedRun(RunId id, const QString& name, const QString& consolePath)
{
    RunRecord r;
    r.id = id;
    r.name = name;
    r.state = RunState::Failed;
    r.consolePath = consolePath;
    r.startedAt = QDateTime::fromMSecsSinceEpoch(1000, Qt::UTC);
    r.finishedAt = QDateTime::fromMSecsSinceEpoch(9000, Qt::UTC);
    return r;
}

QStringList shown(const AggregatedConsoleModel* m)
{
    QStringList out;
    for (int r = 0; r < m->rowCount(); ++r)
        out << m->index(r).data().toString();
    return out;
}

} // namespace

class TestAggregatedConsole : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QList<RunRecord> m_runs;
    QByteArray m_oom;
    QByteArray m_mid;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("TrainyardTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_aggregated_console"));
        QSettings().remove(QStringLiteral("aggregatedConsole"));
        m_oom = test::readFixture(QStringLiteral("gpu-workstation/logs/oom.log"));
        m_mid = test::readFixture(QStringLiteral("gpu-workstation/logs/oom_midrun.log"));
        QVERIFY(!m_oom.isEmpty() && !m_mid.isEmpty());
        const QString a = m_dir.filePath(QStringLiteral("1/console.log"));
        const QString b = m_dir.filePath(QStringLiteral("2/console.log"));
        QVERIFY(writeFile(a, m_oom));
        QVERIFY(writeFile(b, m_mid));
        // oom: "allocating..." at 2000, traceback at 5000; midrun: steps at 3000, traceback at 4000.
        QVERIFY(writeFile(
                ConsoleTimeIndex::pathFor(a), "0 2000\n" + QByteArray::number(m_oom.indexOf("Traceback")) + " 5000\n"));
        QVERIFY(writeFile(
                ConsoleTimeIndex::pathFor(b), "0 3000\n" + QByteArray::number(m_mid.indexOf("Traceback")) + " 4000\n"));
        // oom's traceback went to stderr (as Python writes it): from "Traceback" to the end.
        const qint64 tb = m_oom.indexOf("Traceback");
        QVERIFY(writeFile(StderrSidecar::pathFor(a),
                QByteArray::number(tb) + ' ' + QByteArray::number(m_oom.size() - tb) + '\n'));
        m_runs = {finishedRun(1, QStringLiteral("oom"), a), finishedRun(2, QStringLiteral("midrun"), b)};
    }

    void mergedAndTagged()
    {
        AggregatedConsoleView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.resize(900, 400);
        view.show();
        QSignalSpy loaded(&view, &AggregatedConsoleView::loaded);
        view.setRuns(m_runs);
        QTRY_VERIFY(loaded.count() == 1);
        QTRY_VERIFY(view.isIdle());
        const QStringList rows = shown(view.model());
        QCOMPARE(rows.size(), 6 + 22);
        QCOMPARE(rows.at(0), QStringLiteral("[#1 oom] allocating..."));
        QCOMPARE(rows.at(1), QStringLiteral("[#2 midrun] step 1 allocated_gib=8.0 loss=1.0000"));
        QCOMPARE(rows.at(17), QStringLiteral("[#2 midrun] step 17 allocated_gib=136.0 loss=0.0588"));
        QCOMPARE(rows.at(18), QStringLiteral("[#2 midrun] Traceback (most recent call last):"));
        QVERIFY(rows.at(22).startsWith(u"[#2 midrun] torch.OutOfMemoryError"));
        QCOMPARE(rows.at(23), QStringLiteral("[#1 oom] Traceback (most recent call last):"));
        QVERIFY(rows.at(27).startsWith(u"[#1 oom] torch.OutOfMemoryError"));
        const QModelIndex first = view.model()->index(0);
        QCOMPARE(first.data(AggregatedConsoleModel::RunIdRole).toLongLong(), 1);
        QCOMPARE(first.data(AggregatedConsoleModel::TimeRole).toLongLong(), 2000);
        QCOMPARE(view.model()->index(18).data(AggregatedConsoleModel::LevelRole).toInt(), int(ConsoleLevel::Error));
        QVERIFY(view.model()->index(18).data(AggregatedConsoleModel::TracebackRole).toBool());
        QVERIFY(view.listView()->uniformItemSizes());
        QVERIFY(!view.findChild<QLabel*>(QStringLiteral("infoLabel"))->text().contains(u"estimated"));
    }

    void textRegexAndLevelFilters()
    {
        AggregatedConsoleView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.show();
        view.setRuns(m_runs);
        QTRY_VERIFY(view.isIdle() && view.model()->rowCount() == 28);
        auto* edit = view.findChild<QLineEdit*>(QStringLiteral("filterEdit"));
        auto* regex = view.findChild<QCheckBox*>(QStringLiteral("regexCheck"));
        auto* level = view.findChild<QComboBox*>(QStringLiteral("levelCombo"));
        QVERIFY(edit && regex && level);

        // Plain text, case-insensitive.
        QTest::keyClicks(edit, QStringLiteral("ALLOCATED_GIB=1"));
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(shown(view.model()),
                (QStringList{
                        QStringLiteral("[#2 midrun] step 2 allocated_gib=16.0 loss=0.5000"),
                        QStringLiteral("[#2 midrun] step 13 allocated_gib=104.0 loss=0.0769"),
                        QStringLiteral("[#2 midrun] step 14 allocated_gib=112.0 loss=0.0714"),
                        QStringLiteral("[#2 midrun] step 15 allocated_gib=120.0 loss=0.0667"),
                        QStringLiteral("[#2 midrun] step 16 allocated_gib=128.0 loss=0.0625"),
                        QStringLiteral("[#2 midrun] step 17 allocated_gib=136.0 loss=0.0588"),
                }));
        // Regex.
        edit->clear();
        regex->setChecked(true);
        QTest::keyClicks(edit, QStringLiteral("^step [2-4] "));
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(view.model()->rowCount(), 3);
        QVERIFY(view.filterError().isEmpty());
        // An invalid regex is reported and keeps the last valid filter.
        QTest::keyClicks(edit, QStringLiteral("("));
        QVERIFY2(view.filterError().contains(u"offset"), qPrintable(view.filterError()));
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("filterError"))->isVisibleTo(&view));
        QCOMPARE(view.model()->rowCount(), 3);
        QTest::keyClick(edit, Qt::Key_Backspace);
        QVERIFY(view.filterError().isEmpty());

        // Level: errors are the two traceback blocks (5 lines each).
        edit->clear();
        level->setCurrentIndex(level->findData(int(AggregatedConsoleModel::LevelFilter::Errors)));
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(view.model()->rowCount(), 10);
        for (int r = 0; r < 10; ++r)
            QVERIFY(view.model()->index(r).data(AggregatedConsoleModel::TracebackRole).toBool());
        // Level and text together.
        QTest::keyClicks(edit, QStringLiteral("OutOfMemory"));
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(view.model()->rowCount(), 2);
        QCOMPARE(view.model()->index(0).data(AggregatedConsoleModel::RunIdRole).toLongLong(), 2);
        QCOMPARE(view.model()->index(1).data(AggregatedConsoleModel::RunIdRole).toLongLong(), 1);
        // Stderr: oom's traceback, whatever the level of each row.
        edit->clear();
        level->setCurrentIndex(level->findData(int(AggregatedConsoleModel::LevelFilter::Stderr)));
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(view.model()->rowCount(), 5);
        for (int r = 0; r < 5; ++r) {
            QCOMPARE(view.model()->index(r).data(AggregatedConsoleModel::RunIdRole).toLongLong(), 1);
            QVERIFY(view.model()->index(r).data(AggregatedConsoleModel::StderrRole).toBool());
        }
        QCOMPARE(view.model()->index(0).data(AggregatedConsoleModel::TextRole).toString(),
                QStringLiteral("Traceback (most recent call last):"));
        level->setCurrentIndex(level->findData(int(AggregatedConsoleModel::LevelFilter::All)));
        edit->clear();
        QTRY_COMPARE(view.model()->rowCount(), 28);
        QVERIFY(!view.model()->index(0).data(AggregatedConsoleModel::StderrRole).toBool());
    }

    void savedFilters()
    {
        {
            AggregatedConsoleView view;
            view.setRuns(m_runs);
            QTRY_VERIFY(view.isIdle() && view.model()->rowCount() == 28);
            view.setFilter(QStringLiteral("step 1\\d"), true, AggregatedConsoleModel::LevelFilter::All);
            view.saveFilter(QStringLiteral("late steps"));
            view.setFilter(QString(), false, AggregatedConsoleModel::LevelFilter::Errors);
            view.saveFilter(QStringLiteral("errors"));
            QCOMPARE(view.savedFilters().size(), 2);
            QCOMPARE(view.savedFilters().value(QStringLiteral("late steps")),
                    (AggregatedConsoleView::SavedFilter{
                            QStringLiteral("step 1\\d"), true, AggregatedConsoleModel::LevelFilter::All}));
        }
        // A new view (another session) sees them, in its combo, and applies one when picked.
        AggregatedConsoleView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.setRuns(m_runs);
        QTRY_VERIFY(view.isIdle() && view.model()->rowCount() == 28);
        auto* combo = view.findChild<QComboBox*>(QStringLiteral("savedFilterCombo"));
        QVERIFY(combo);
        QCOMPARE(combo->count(), 3); // placeholder + 2
        const int i = combo->findText(QStringLiteral("late steps"));
        QVERIFY(i > 0);
        combo->setCurrentIndex(i);
        Q_EMIT combo->activated(i);
        QTRY_VERIFY(view.isIdle());
        QCOMPARE(view.findChild<QLineEdit*>(QStringLiteral("filterEdit"))->text(), QStringLiteral("step 1\\d"));
        QVERIFY(view.findChild<QCheckBox*>(QStringLiteral("regexCheck"))->isChecked());
        QCOMPARE(view.model()->rowCount(), 8); // steps 10..17
        QCOMPARE(combo->currentText(), QStringLiteral("late steps"));
        // Editing the filter leaves the saved one.
        auto* edit = view.findChild<QLineEdit*>(QStringLiteral("filterEdit"));
        edit->clear();
        QTest::keyClicks(edit, QStringLiteral("step 1[7]"));
        QCOMPARE(combo->currentIndex(), 0);
        QTRY_COMPARE(view.model()->rowCount(), 1);
        // Overwrite and delete.
        view.saveFilter(QStringLiteral("late steps"));
        QCOMPARE(view.savedFilters().value(QStringLiteral("late steps")).text, QStringLiteral("step 1[7]"));
        combo->setCurrentIndex(combo->findText(QStringLiteral("errors")));
        view.findChild<QToolButton*>(QStringLiteral("deleteFilterButton"))->click();
        QCOMPARE(view.savedFilters().keys(), QStringList{QStringLiteral("late steps")});
        QCOMPARE(combo->count(), 2);
        view.deleteSavedFilter(QStringLiteral("late steps"));
        QVERIFY(view.savedFilters().isEmpty());
        QVERIFY(!QSettings().contains(QStringLiteral("aggregatedConsole/filters")));
    }

    // A live run without an index yet, then with one: rows appear as the
    // copy grows, follow mode keeps the last in view.
    void liveRunFollows()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("7/console.log"));
        const QString times = ConsoleTimeIndex::pathFor(log);
        QVERIFY(writeFile(log, {}));
        RunRecord live;
        live.id = 7;
        live.name = QStringLiteral("live");
        live.state = RunState::Running;
        live.consolePath = log;
        live.startedAt = QDateTime::currentDateTimeUtc();
        AggregatedConsoleView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.resize(600, 200);
        view.show();
        view.setRuns({live, m_runs.at(0)});
        QTRY_VERIFY(view.isIdle() && view.model()->rowCount() == 6);
        QVERIFY(view.followMode());
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        QByteArray bytes;
        for (int i = 0; i < 300; ++i)
            bytes += "epoch " + QByteArray::number(i) + " loss=0.5\n";
        QVERIFY(writeFile(times, ConsoleTimeIndex::formatEntry(0, now), QIODevice::Append));
        QVERIFY(writeFile(log, bytes + "tail without newline", QIODevice::Append));
        QTRY_COMPARE_WITH_TIMEOUT(view.model()->rowCount(), 306, 5000);
        QTRY_VERIFY(view.listView()->verticalScrollBar()->maximum() > 0);
        QTRY_COMPARE(view.listView()->verticalScrollBar()->value(), view.listView()->verticalScrollBar()->maximum());
        const QModelIndex last = view.model()->index(305);
        QCOMPARE(last.data(AggregatedConsoleModel::TextRole).toString(), QStringLiteral("epoch 299 loss=0.5"));
        QCOMPARE(last.data(AggregatedConsoleModel::TimeRole).toLongLong(), now);
        // Scrolling up leaves follow mode.
        view.listView()->verticalScrollBar()->setValue(0);
        QVERIFY(!view.followMode());
        view.setFollowMode(true);
        QCOMPARE(view.listView()->verticalScrollBar()->value(), view.listView()->verticalScrollBar()->maximum());
        // The run finishes: its last row is committed.
        live.state = RunState::Succeeded;
        live.finishedAt = QDateTime::currentDateTimeUtc();
        view.updateRun(live);
        QTRY_COMPARE(view.model()->rowCount(), 307);
        QCOMPARE(view.model()->index(306).data(AggregatedConsoleModel::TextRole).toString(),
                QStringLiteral("tail without newline"));
    }

    // Old runs without console.times: interpolated, and said so.
    void estimatedTimesAreShown()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("old/console.log"));
        QVERIFY(writeFile(log, m_mid));
        AggregatedConsoleView view;
        view.setRuns({finishedRun(3, QStringLiteral("old-run"), log)});
        QTRY_VERIFY(view.isIdle() && view.model()->rowCount() == 22);
        QTRY_VERIFY(view.findChild<QLabel*>(QStringLiteral("infoLabel"))
                            ->text()
                            .contains(u"estimated from start/end for: #3 old-run"));
        const qint64 t0 = view.model()->index(0).data(AggregatedConsoleModel::TimeRole).toLongLong();
        const qint64 t1 = view.model()->index(21).data(AggregatedConsoleModel::TimeRole).toLongLong();
        QVERIFY(t0 > 1000 && t0 < t1 && t1 <= 9000);
    }

    // Many lines: loaded off the GUI thread, filtered in slices.
    void largeConsoleFiltersInSlices()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("big/console.log"));
        QByteArray bytes;
        constexpr int kLines = 200000;
        bytes.reserve(kLines * 40);
        for (int i = 0; i < kLines; ++i) {
            bytes += "it " + QByteArray::number(i) + (i % 1000 == 0 ? " WARNING: slow\n" : " loss=0.25 acc=0.9\n");
        }
        QVERIFY(writeFile(log, bytes));
        AggregatedConsoleView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::Warning);
        view.show();
        view.setRuns({finishedRun(4, QStringLiteral("big"), log)});
        QTRY_VERIFY_WITH_TIMEOUT(view.isIdle() && view.model()->totalLines() == kLines, 60000);
        QCOMPARE(view.model()->rowCount(), kLines);
        view.setFilter(QString(), false, AggregatedConsoleModel::LevelFilter::WarningsAndErrors);
        // More lines than one slice: the pass is not done synchronously.
        QVERIFY(view.model()->isFiltering());
        QTRY_VERIFY_WITH_TIMEOUT(view.isIdle(), 30000);
        QCOMPARE(view.model()->rowCount(), kLines / 1000);
        QCOMPARE(view.model()->index(1).data(AggregatedConsoleModel::TextRole).toString(),
                QStringLiteral("it 1000 WARNING: slow"));
    }
};

QTEST_MAIN(TestAggregatedConsole)
#include "TestAggregatedConsole.moc"
