// Run states and failure kinds in the GUI: English exactly as core names them
// without a translator, and Chinese with the zh_CN one (issue #28).
#include "core/common/FailureKind.h"
#include "core/common/Run.h"
#include "ui/i18n/RunTexts.h"
#include "ui/i18n/Translations.h"

#include <QSet>
#include <QTest>
#include <QTranslator>

using namespace ty;

namespace {
const QList<RunState> kStates{RunState::Queued, RunState::Held, RunState::Starting, RunState::Running,
        RunState::Succeeded, RunState::Failed, RunState::Cancelled, RunState::Unknown};
const QList<FailureKind> kKinds{FailureKind::ExitCode, FailureKind::Signal, FailureKind::OomKilled,
        FailureKind::CudaOutOfMemory, FailureKind::PythonTraceback, FailureKind::NcclError, FailureKind::TimeLimit,
        FailureKind::NodeLost, FailureKind::Cancelled, FailureKind::StartFailed, FailureKind::Unschedulable,
        FailureKind::Other, FailureKind::Preempted};
} // namespace

class TestRunTexts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void englishIsCoresNames()
    {
        for (RunState s : kStates)
            QCOMPARE(runStateText(s), runStateName(s));
        for (FailureKind k : kKinds)
            QCOMPARE(failureKindText(k), failureKindLabel(k));
        QCOMPARE(failureKindText(FailureKind::None), QString());
        // The state cell: the kind only for a failure that has one.
        QCOMPARE(runStateCellText(RunState::Failed, FailureKind::CudaOutOfMemory), QStringLiteral("failed (CUDA OOM)"));
        QCOMPARE(runStateCellText(RunState::Failed, FailureKind::None), QStringLiteral("failed"));
        QCOMPARE(runStateCellText(RunState::Cancelled, FailureKind::Cancelled), QStringLiteral("cancelled"));
        // Every text the cell can show, once each: 8 states and "failed (K)" for 12 kinds.
        const QStringList cells = runStateCellTexts();
        QCOMPARE(cells.size(), kStates.size() + kKinds.size());
        QCOMPARE(QSet<QString>(cells.begin(), cells.end()).size(), cells.size());
        QVERIFY(cells.contains(QStringLiteral("failed (unschedulable)")));
        QVERIFY(cells.contains(QStringLiteral("unknown")));
    }

    void chineseForEveryStateAndKind()
    {
        const InstalledTranslations installed = installTranslations(qApp, QLocale(QLocale::Chinese, QLocale::China));
        QVERIFY(installed.trainyard);
        QCOMPARE(runStateText(RunState::Running), QStringLiteral("运行中"));
        QCOMPARE(runStateText(RunState::Failed), QStringLiteral("已失败"));
        QCOMPARE(failureKindText(FailureKind::CudaOutOfMemory), QStringLiteral("CUDA 显存不足"));
        QSet<QString> states;
        for (RunState s : kStates) {
            const QString text = runStateText(s);
            QVERIFY2(text != runStateName(s), qPrintable(runStateName(s) + u" is not translated"_qs));
            states << text;
        }
        QCOMPARE(states.size(), kStates.size()); // no two states read alike
        for (FailureKind k : kKinds)
            QVERIFY2(failureKindText(k) != failureKindLabel(k),
                    qPrintable(failureKindLabel(k) + u" is not translated"_qs));
        installTranslations(qApp, QLocale(QLocale::English, QLocale::UnitedStates));
        QCOMPARE(runStateText(RunState::Running), QStringLiteral("running"));
    }
};

QTEST_GUILESS_MAIN(TestRunTexts)
#include "TestRunTexts.moc"
