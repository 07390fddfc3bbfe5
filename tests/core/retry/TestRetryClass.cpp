// The classes of an ended run as the retry policy names them (issue #25),
// and FailureKind's new `preempted`.
#include "core/common/FailureKind.h"
#include "core/retry/RetryClass.h"

#include <QTest>

using namespace ty;

class TestRetryClass final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyFailureKindHasItsClass_data()
    {
        QTest::addColumn<FailureKind>("kind");
        QTest::addColumn<RetryClass>("cls");
        QTest::newRow("none") << FailureKind::None << RetryClass::Succeeded;
        QTest::newRow("exit_code") << FailureKind::ExitCode << RetryClass::Failed;
        QTest::newRow("python_traceback") << FailureKind::PythonTraceback << RetryClass::Failed;
        QTest::newRow("start_failed") << FailureKind::StartFailed << RetryClass::Failed;
        QTest::newRow("other") << FailureKind::Other << RetryClass::Failed;
        QTest::newRow("signal") << FailureKind::Signal << RetryClass::Signal;
        QTest::newRow("oom_killed") << FailureKind::OomKilled << RetryClass::Oom;
        QTest::newRow("cuda_oom") << FailureKind::CudaOutOfMemory << RetryClass::CudaOom;
        QTest::newRow("nccl_error") << FailureKind::NcclError << RetryClass::Nccl;
        QTest::newRow("time_limit") << FailureKind::TimeLimit << RetryClass::Timeout;
        QTest::newRow("node_lost") << FailureKind::NodeLost << RetryClass::NodeLost;
        QTest::newRow("preempted") << FailureKind::Preempted << RetryClass::Preempted;
        QTest::newRow("cancelled") << FailureKind::Cancelled << RetryClass::Cancelled;
        QTest::newRow("unschedulable") << FailureKind::Unschedulable << RetryClass::Unschedulable;
    }

    void everyFailureKindHasItsClass()
    {
        QFETCH(FailureKind, kind);
        QFETCH(RetryClass, cls);
        QCOMPARE(retryClassOf(kind), cls);
    }

    void infraAndNeverRetried()
    {
        const QList<RetryClass> infra{RetryClass::NodeLost, RetryClass::Preempted};
        const QList<RetryClass> never{RetryClass::Succeeded, RetryClass::Cancelled, RetryClass::Unschedulable};
        for (const QString& name : retryClassNames()) {
            const RetryClass cls = *retryClassFromName(name);
            QCOMPARE(isInfraRetryClass(cls), infra.contains(cls));
            QCOMPARE(isNeverRetried(cls), never.contains(cls));
        }
    }

    void namesRoundTrip()
    {
        QCOMPARE(retryClassNames(),
                (QStringList{QStringLiteral("succeeded"), QStringLiteral("failed"), QStringLiteral("signal"),
                        QStringLiteral("oom"), QStringLiteral("cuda_oom"), QStringLiteral("nccl"),
                        QStringLiteral("timeout"), QStringLiteral("node_lost"), QStringLiteral("preempted"),
                        QStringLiteral("cancelled"), QStringLiteral("unschedulable")}));
        for (const QString& name : retryClassNames()) {
            const auto cls = retryClassFromName(name);
            QVERIFY2(cls, qPrintable(name));
            QCOMPARE(retryClassName(*cls), name);
            QVERIFY(!retryClassLabel(*cls).isEmpty());
        }
        QCOMPARE(retryClassFromName(u"OOM"), std::nullopt); // names are exact, as in the spec
        QCOMPARE(retryClassFromName(u"time_limit"), std::nullopt);
        QCOMPARE(retryClassLabel(RetryClass::CudaOom), QStringLiteral("CUDA OOM"));
        QCOMPARE(retryClassLabel(RetryClass::Timeout), QStringLiteral("time limit"));
    }

    void preemptedIsAStoredFailureKind()
    {
        // A storage format: the name and label never change once written.
        QCOMPARE(failureKindName(FailureKind::Preempted), QStringLiteral("preempted"));
        QCOMPARE(failureKindLabel(FailureKind::Preempted), QStringLiteral("preempted"));
        QCOMPARE(failureKindFromName(u"preempted"), std::optional<FailureKind>(FailureKind::Preempted));
        // The kinds stored before it keep their names.
        QCOMPARE(failureKindName(FailureKind::NodeLost), QStringLiteral("node_lost"));
        QCOMPARE(failureKindName(FailureKind::Other), QStringLiteral("other"));
    }
};

QTEST_GUILESS_MAIN(TestRetryClass)
#include "TestRetryClass.moc"
