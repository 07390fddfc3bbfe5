#include "core/pipeline/PipelineProgress.h"

#include <QTest>

using namespace ty;
using namespace ty::pipeline;

namespace {

PipelineSpec parse(const QString& yaml)
{
    auto spec = parsePipeline(yaml, QStringLiteral("p.yaml"), QStringLiteral("/w"));
    if (!spec)
        qFatal("%s", qPrintable(spec.error().message));
    return *spec;
}

QStringList names(const PipelineProgress& p, const QList<int>& instances)
{
    QStringList out;
    for (int i : instances)
        out << p.instanceName(i);
    return out;
}

// Ends every started instance as `state`, returning their names.
QStringList runAll(PipelineProgress& p, StepState state, const QMap<QString, QString>& outputs = {})
{
    const auto d = p.advance();
    for (int i : d.start) {
        p.setRunning(i, RunId(100 + i));
        p.setEnded(i, state, {}, outputs);
    }
    return names(p, d.start);
}

} // namespace

class TestPipelineProgress final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Which steps may wait in Slurm's queue behind their upstream jobs
    // (--dependency=afterok, issue #26): only those Slurm's afterok runs
    // exactly when the rules would.
    void earlyStartRule()
    {
        const PipelineSpec spec = parse(QStringLiteral("params: {go: 'true'}\n"
                                                       "steps:\n"
                                                       "  - {name: a, command: x}\n"
                                                       "  - {name: b, command: x, depends: [a]}\n"
                                                       "  - {name: memo, command: x, depends: [a], memoize: {}}\n"
                                                       "  - {name: out, command: 'echo {{steps.a.metrics.loss.max}}'}\n"
                                                       "  - {name: cond, command: x, depends: 'a.failed'}\n"
                                                       "  - {name: r, command: x, retry: 2}\n"
                                                       "  - {name: afterR, command: x, depends: [r]}\n"
                                                       "  - {name: c, command: x, continue_on: failed}\n"
                                                       "  - {name: afterC, command: x, depends: [c]}\n"
                                                       "  - {name: w, command: x, depends: [a], when: 'params.go'}\n"));
        const auto obstacle = [&](const char* name) {
            for (int s = 0; s < spec.steps.size(); ++s)
                if (spec.steps.at(s).name == QLatin1String(name))
                    return earlyStartObstacle(spec, s);
            return QStringLiteral("?");
        };
        QCOMPARE(obstacle("a"), QStringLiteral("it has no upstream step"));
        QCOMPARE(obstacle("b"), QString());
        QVERIFY(obstacle("memo").startsWith(QStringLiteral("it is memoized")));
        QCOMPARE(obstacle("out"), QStringLiteral("it takes steps.a.metrics.loss.max from step 'a'"));
        QCOMPARE(obstacle("cond"), QStringLiteral("its depends is a condition"));
        QCOMPARE(obstacle("afterR"), QStringLiteral("upstream step 'r' has retry:"));
        QCOMPARE(obstacle("afterC"), QStringLiteral("upstream step 'c' has continue_on: failed"));
        QCOMPARE(obstacle("w"), QString()); // a `when` over params only

        PipelineProgress p(spec);
        QSet<int> queued; // upstream instances whose runs are Slurm jobs
        const auto early = [&] { return names(p, p.startEarly([&](int i) { return queued.contains(i); })); };
        auto d = p.advance();
        QCOMPARE(names(p, d.start), (QStringList{"a", "r", "c"}));
        QCOMPARE(early(), QStringList{}); // nothing upstream runs yet
        p.setRunning(0, 10);
        QCOMPARE(early(), QStringList{}); // a's job id not known yet
        queued.insert(0);
        QCOMPARE(early(), (QStringList{"b", "w"}));
        QCOMPARE(early(), QStringList{}); // offered once
        p.setRunning(5, 11);
        queued.insert(5);
        p.setRunning(7, 12);
        queued.insert(7);
        QCOMPARE(early(), QStringList{});
        // a's end offers the others the ordinary way, not b and w again.
        p.setEnded(0, StepState::Succeeded, {}, {{QStringLiteral("metrics.loss.max"), QStringLiteral("1")}});
        QCOMPARE(names(p, p.advance().start), (QStringList{"memo", "out"}));
    }

    void earlyStartWaitsForStagedOutputsAndStopsAfterFailure()
    {
        PipelineProgress p(parse(QStringLiteral("steps:\n"
                                                "  - {name: a, command: x, artifacts: [m.bin]}\n"
                                                "  - {name: b, command: x, depends: [a]}\n"
                                                "  - {name: c, command: x, depends: [b]}\n"
                                                "  - {name: d, command: x}\n"
                                                "  - {name: e, command: x, depends: [d]}\n")));
        QSet<int> queued;
        const auto early = [&] { return names(p, p.startEarly([&](int i) { return queued.contains(i); })); };
        QCOMPARE(names(p, p.advance().start), (QStringList{"a", "d"}));
        p.setRunning(0, 1);
        p.setRunning(3, 2);
        queued << 0 << 3;
        QCOMPARE(early(), QStringList{"e"}); // b takes a's artifacts: only after a
        p.setEnded(0, StepState::Succeeded, {});
        QCOMPARE(names(p, p.advance().start), QStringList{"b"});
        p.setRunning(1, 3);
        queued << 1;
        QCOMPARE(early(), QStringList{"c"}); // a's outputs are there now
        // After a failure under fail_fast nothing more goes early.
        PipelineProgress q(parse(QStringLiteral("steps:\n"
                                                "  - {name: a, command: x}\n"
                                                "  - {name: f, command: x}\n"
                                                "  - {name: b, command: x, depends: [a]}\n")));
        QCOMPARE(names(q, q.advance().start), (QStringList{"a", "f"}));
        q.setRunning(0, 1);
        q.setRunning(1, 2);
        q.setEnded(1, StepState::Failed, {});
        QCOMPARE(q.startEarly([](int) { return true; }), QList<int>{});
    }

    void chainRunsInOrder()
    {
        PipelineProgress p(parse(QStringLiteral("steps:\n"
                                                "  - {name: a, command: x}\n"
                                                "  - {name: b, command: x, depends: [a]}\n"
                                                "  - {name: c, command: x, depends: [b]}\n"
                                                "  - {name: d, command: x}\n")));
        auto d = p.advance();
        QCOMPARE(names(p, d.start), (QStringList{"a", "d"}));
        QCOMPARE(p.advance().start, QList<int>{}); // offered once only
        p.setRunning(d.start[0], 1);
        p.setRunning(d.start[1], 2);
        QCOMPARE(p.state(), PipelineState::Running);
        p.setEnded(d.start[0], StepState::Succeeded, {});
        QCOMPARE(names(p, p.advance().start), QStringList{"b"});
        p.setRunning(1, 3);
        p.setEnded(1, StepState::Cached, QStringLiteral("reused run 7"));
        QCOMPARE(names(p, p.advance().start), QStringList{"c"});
        p.setRunning(2, 4);
        p.setEnded(2, StepState::Succeeded, {});
        QCOMPARE(p.state(), PipelineState::Running); // d still runs
        p.setEnded(3, StepState::Succeeded, {});
        QCOMPARE(p.state(), PipelineState::Succeeded);
    }

    void failFastStopsNewStepsButNotRunningOnes()
    {
        PipelineProgress p(parse(QStringLiteral("steps:\n"
                                                "  - {name: a, command: x}\n"
                                                "  - {name: slow, command: x}\n"
                                                "  - {name: b, command: x, depends: [a]}\n"
                                                "  - {name: other, command: x, depends: [slow]}\n")));
        const auto d = p.advance();
        QCOMPARE(names(p, d.start), (QStringList{"a", "slow"}));
        p.setRunning(0, 1);
        p.setRunning(1, 2);
        p.setEnded(0, StepState::Failed, QStringLiteral("exit 1"));
        const auto after = p.advance();
        QCOMPARE(after.start, QList<int>{});
        QCOMPARE(names(p, after.skipped), QStringList{"b"});
        QCOMPARE(p.instances().at(2).reason, QStringLiteral("not run: step 'a' failed"));
        QCOMPARE(p.state(), PipelineState::Running); // slow still runs
        p.setEnded(1, StepState::Succeeded, {});
        const auto last = p.advance();
        QCOMPARE(last.start, QList<int>{});
        QCOMPARE(names(p, last.skipped), QStringList{"other"});
        QCOMPARE(p.instances().at(3).reason, QStringLiteral("not run: step 'a' failed and fail_fast is on"));
        QCOMPARE(p.state(), PipelineState::Failed);
    }

    void withoutFailFastIndependentBranchesFinish()
    {
        PipelineProgress p(parse(QStringLiteral("fail_fast: false\n"
                                                "steps:\n"
                                                "  - {name: a, command: x}\n"
                                                "  - {name: slow, command: x}\n"
                                                "  - {name: b, command: x, depends: [a]}\n"
                                                "  - {name: other, command: x, depends: [slow]}\n")));
        p.advance();
        p.setRunning(0, 1);
        p.setRunning(1, 2);
        p.setEnded(0, StepState::Failed, {});
        QCOMPARE(names(p, p.advance().skipped), QStringList{"b"});
        p.setEnded(1, StepState::Succeeded, {});
        QCOMPARE(names(p, p.advance().start), QStringList{"other"}); // argo#10312: the branch runs on
        p.setRunning(3, 3);
        QCOMPARE(p.state(), PipelineState::Running);
        p.setEnded(3, StepState::Succeeded, {});
        QCOMPARE(p.state(), PipelineState::Failed); // and the pipeline still ends failed, not hung
    }

    void continueOnFailedLetsDependentsRun()
    {
        PipelineProgress p(parse(QStringLiteral("steps:\n"
                                                "  - {name: lint, command: x, continue_on: failed}\n"
                                                "  - {name: train, command: x, depends: [lint]}\n")));
        QCOMPARE(runAll(p, StepState::Failed), QStringList{"lint"});
        QCOMPARE(runAll(p, StepState::Succeeded), QStringList{"train"});
        QCOMPARE(p.state(), PipelineState::Succeeded);
    }

    void dependsExpressionOverStates()
    {
        PipelineProgress p(
                parse(QStringLiteral("fail_fast: false\n"
                                     "steps:\n"
                                     "  - {name: train, command: x}\n"
                                     "  - {name: lint, command: x}\n"
                                     "  - {name: report, command: x, depends: 'train.succeeded && lint.failed'}\n"
                                     "  - {name: publish, command: x, depends: 'train.succeeded && !lint.failed'}\n"
                                     "  - {name: cleanup, command: x, depends: 'train.failed || lint.failed'}\n")));
        const auto d = p.advance();
        p.setEnded(d.start[0], StepState::Cached, {}); // cached counts as succeeded
        p.setEnded(d.start[1], StepState::Failed, {});
        const auto next = p.advance();
        QCOMPARE(names(p, next.start), (QStringList{"report", "cleanup"}));
        QCOMPARE(names(p, next.skipped), QStringList{"publish"});
        QCOMPARE(p.instances().at(3).reason,
                QStringLiteral("not run: depends 'train.succeeded && !lint.failed' is false"));
    }

    void fanOutGathersAndAllSkippedIsSkipped()
    {
        PipelineProgress p(parse(QStringLiteral("params: {min: '1'}\n"
                                                "steps:\n"
                                                "  - name: shard\n"
                                                "    for_each: {shard: [0, 1, 2]}\n"
                                                "    when: item.shard >= params.min\n"
                                                "    command: 'echo {{item.shard}}'\n"
                                                "    outputs: {params: {n: out.txt}}\n"
                                                "  - {name: gather, command: 'echo {{steps.shard.outputs.n}}'}\n")));
        const auto d = p.advance();
        QCOMPARE(names(p, d.start), (QStringList{"shard[shard=1]", "shard[shard=2]"}));
        QCOMPARE(names(p, d.skipped), QStringList{"shard[shard=0]"});
        QCOMPARE(p.paramsFor(d.start[0]), (QMap<QString, QString>{{"shard", "1"}}));
        QCOMPARE(p.valuesFor(d.start[1]).value(QStringLiteral("item.shard")), QStringLiteral("2"));
        p.setEnded(d.start[0], StepState::Succeeded, {}, {{QStringLiteral("outputs.n"), QStringLiteral("10")}});
        QCOMPARE(p.stepState(0), StepState::Waiting); // one instance left
        p.setRunning(d.start[1], 9);
        QCOMPARE(p.stepState(0), StepState::Running);
        p.setEnded(d.start[1], StepState::Succeeded, {}, {{QStringLiteral("outputs.n"), QStringLiteral("20")}});
        QCOMPARE(p.stepState(0), StepState::Succeeded);
        const auto g = p.advance();
        QCOMPARE(names(p, g.start), QStringList{"gather"});
        QCOMPARE(p.valuesFor(g.start[0]).value(QStringLiteral("steps.shard.outputs.n")),
                QStringLiteral("[\"10\",\"20\"]"));

        // All items skipped: the fan-out is skipped, and so is what needs it (argo#3378).
        PipelineProgress none(parse(QStringLiteral("params: {min: '5'}\n"
                                                   "steps:\n"
                                                   "  - name: shard\n"
                                                   "    for_each: {shard: [0, 1]}\n"
                                                   "    when: item.shard >= params.min\n"
                                                   "    command: x\n"
                                                   "  - {name: gather, command: x, depends: [shard]}\n")));
        const auto s = none.advance();
        QCOMPARE(s.start, QList<int>{});
        QCOMPARE(none.stepState(0), StepState::Skipped);
        QCOMPARE(names(none, s.skipped), (QStringList{"shard[shard=0]", "shard[shard=1]", "gather"}));
        QCOMPARE(none.instances().at(2).reason, QStringLiteral("not run: step 'shard' skipped"));
        QCOMPARE(none.state(), PipelineState::Succeeded);
    }

    void fanOutIsTheProductInOrder()
    {
        PipelineProgress p(parse(QStringLiteral("steps:\n"
                                                "  - name: grid\n"
                                                "    for_each: {a: [x, y], b: ['1', '2', '3']}\n"
                                                "    command: x\n")));
        QCOMPARE(names(p, p.advance().start),
                (QStringList{"grid[a=x,b=1]", "grid[a=x,b=2]", "grid[a=x,b=3]", "grid[a=y,b=1]", "grid[a=y,b=2]",
                        "grid[a=y,b=3]"}));
    }

    void whenThatCannotBeEvaluatedFailsTheStep()
    {
        PipelineProgress p(parse(QStringLiteral("params: {mode: full}\n"
                                                "steps:\n"
                                                "  - {name: a, command: x, when: 'params.mode > 1'}\n"
                                                "  - {name: b, command: x}\n")));
        const auto d = p.advance();
        QCOMPARE(names(p, d.failed), QStringList{"a"});
        QVERIFY2(p.instances().at(0).reason.contains(QStringLiteral("'>' compares numbers, and 'full' is not one")),
                qPrintable(p.instances().at(0).reason));
        QCOMPARE(names(p, d.skipped), QStringList{"b"}); // fail_fast
        QCOMPARE(p.state(), PipelineState::Failed);
    }

    void cancelStopsWaitingAndReportsRunning()
    {
        PipelineProgress p(parse(QStringLiteral("steps:\n"
                                                "  - {name: a, command: x}\n"
                                                "  - {name: b, command: x, depends: [a]}\n")));
        p.advance();
        p.setRunning(0, 5);
        QCOMPARE(p.cancel(), QList<int>{0});
        QCOMPARE(p.instances().at(1).state, StepState::Cancelled);
        QCOMPARE(p.state(), PipelineState::Running);
        p.setEnded(0, StepState::Cancelled, {});
        QCOMPARE(p.state(), PipelineState::Cancelled);
    }

    void outputsOfAStepAreItsReferencesValues()
    {
        PipelineProgress p(parse(QStringLiteral("steps:\n"
                                                "  - {name: train, command: x}\n"
                                                "  - name: eval\n"
                                                "    command: 'echo {{steps.train.metrics.val.acc.max}}'\n"
                                                "    when: steps.train.metrics.val.acc.max > 0.9\n")));
        const auto d = p.advance();
        p.setEnded(
                d.start[0], StepState::Succeeded, {}, {{QStringLiteral("metrics.val.acc.max"), QStringLiteral("0.8")}});
        const auto e = p.advance();
        QCOMPARE(names(p, e.skipped), QStringList{"eval"});
        QCOMPARE(p.instances().at(1).reason,
                QStringLiteral("not run: when 'steps.train.metrics.val.acc.max > 0.9' is false"));
    }
};

QTEST_GUILESS_MAIN(TestPipelineProgress)
#include "TestPipelineProgress.moc"
