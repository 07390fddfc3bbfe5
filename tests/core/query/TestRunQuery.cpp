#include "core/query/RunQuery.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace ty;

namespace {

// One run as a query sees it.
struct Fixture {
    RunRecord run;
    QMap<QString, QString> params;
    QMap<QString, MetricPoint> latest;
    RunSpecLabels labels;

    RunQueryInput input() const { return RunQueryInput{&run, &params, &latest, &labels}; }
};

Fixture makeRun(RunId id, const QString& name, RunState state, const QString& node, const QStringList& tags,
        const QMap<QString, QString>& params, const QMap<QString, double>& metrics = {})
{
    Fixture f;
    f.run.id = id;
    f.run.name = name;
    f.run.state = state;
    f.run.node = node;
    f.run.tags = tags;
    f.params = params;
    for (auto it = metrics.cbegin(); it != metrics.cend(); ++it) {
        MetricPoint p;
        p.run = id;
        p.key = it.key();
        p.step = 100;
        p.value = it.value();
        f.latest.insert(it.key(), p);
    }
    return f;
}

QString s(const char* text)
{
    return QString::fromUtf8(text);
}

// A small sweep: learning rates written the way people write them.
QList<Fixture> sweep()
{
    QList<Fixture> runs;
    runs << makeRun(1, s("digits-mlp[lr=0.0001]"), RunState::Succeeded, s("gpu1"), {s("baseline")},
            {{s("lr"), s("0.0001")}, {s("batch_size"), s("32")}, {s("optimizer"), s("adam")}},
            {{s("loss"), 0.21}, {s("val_acc"), 0.93}});
    runs << makeRun(2, s("digits-mlp[lr=1e-3]"), RunState::Succeeded, s("gpu1"), {s("baseline"), s("sweep")},
            {{s("lr"), s("1e-3")}, {s("batch_size"), s("64")}, {s("optimizer"), s("Adam")}},
            {{s("loss"), 0.18}, {s("val_acc"), 0.95}});
    runs << makeRun(3, s("digits-mlp[lr=.01]"), RunState::Failed, s("gpu2"), {s("sweep")},
            {{s("lr"), s(".01")}, {s("batch_size"), s("64")}, {s("optimizer"), s("sgd")}},
            {{s("loss"), std::numeric_limits<double>::quiet_NaN()}});
    runs << makeRun(4, s("ResNet50 debug"), RunState::Running, s("local"), {},
            {{s("lr"), s("5e-4")}, {s("depth"), s("50")}}, {{s("loss"), 1.5}});
    runs << makeRun(5, s("notes: (old) run"), RunState::Queued, s("gpu2"), {s("Baseline")}, {});
    runs.last().labels.queue = s("long");
    runs.last().labels.user = s("ana");
    runs.last().labels.project = s("vision");
    return runs;
}

QList<RunId> matching(const QString& text)
{
    auto q = RunQuery::parse(text);
    if (!q) {
        qWarning("%s", qPrintable(q.error().message));
        return {-1};
    }
    QList<RunId> ids;
    for (const Fixture& f : sweep())
        if (q->matches(f.input()))
            ids << f.run.id;
    return ids;
}

} // namespace

class TestRunQuery : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void matches_data()
    {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QList<RunId>>("expected");
        using L = QList<RunId>;

        QTest::newRow("empty") << s("") << L{1, 2, 3, 4, 5};
        QTest::newRow("spaces only") << s("   ") << L{1, 2, 3, 4, 5};
        // The example: numbers in any float form compare numerically.
        QTest::newRow("lr < 1e-3 and tag:baseline") << s("lr < 1e-3 and tag:baseline") << L{1};
        QTest::newRow("lr <= 1e-3") << s("lr <= 1e-3") << L{1, 2, 4};
        QTest::newRow("lr<.001 no spaces") << s("lr<.001") << L{1, 4};
        QTest::newRow("lr = 0.001 equals 1e-3") << s("lr = 0.001") << L{2};
        QTest::newRow("lr == 1E-3") << s("lr == 1E-3") << L{2};
        QTest::newRow("lr > 0.0005") << s("lr > 0.0005") << L{2, 3};
        QTest::newRow("lr >= 5e-4") << s("lr >= 5e-4") << L{2, 3, 4};
        QTest::newRow("lr != 1e-3, missing param false") << s("lr != 1e-3") << L{1, 3, 4};
        QTest::newRow("not keeps runs without the param") << s("not lr < 1") << L{5};
        QTest::newRow("quoted number is a number") << s("batch_size = \"64\"") << L{2, 3};
        QTest::newRow("batch_size >= +64") << s("batch_size >= +64") << L{2, 3};
        QTest::newRow("text equality ignores case") << s("optimizer = adam") << L{1, 2};
        QTest::newRow("text inequality") << s("optimizer != adam") << L{3};
        QTest::newRow("text ordering") << s("optimizer > b") << L{3};
        QTest::newRow("param regex") << s("optimizer ~ ^a") << L{1, 2};
        QTest::newRow("param negated regex") << s("optimizer !~ ^a") << L{3};
        QTest::newRow("param. prefix") << s("param.depth = 50") << L{4};
        QTest::newRow("params. prefix") << s("params.lr < 0.0002") << L{1};
        QTest::newRow("metric") << s("metric.val_acc > 0.94") << L{2};
        QTest::newRow("metrics <") << s("metrics.loss < 1") << L{1, 2};
        QTest::newRow("metric NaN is no match") << s("metric.loss >= 0") << L{1, 2, 4};
        QTest::newRow("metric nan != x") << s("metric.loss != 0.21") << L{2, 3, 4};
        QTest::newRow("tag: ignores case") << s("tag:BASELINE") << L{1, 2, 5};
        QTest::newRow("tag =") << s("tag = sweep") << L{2, 3};
        QTest::newRow("tags:") << s("tags:sweep") << L{2, 3};
        QTest::newRow("tag != (no tag is)") << s("tag != baseline") << L{3, 4};
        QTest::newRow("tag ~") << s("tag ~ ^sw") << L{2, 3};
        QTest::newRow("tag !~ (no tag matches)") << s("tag !~ base") << L{3, 4};
        QTest::newRow("state:") << s("state:running") << L{4};
        QTest::newRow("STATE: keyword case") << s("STATE:Succeeded") << L{1, 2};
        QTest::newRow("state != succeeded") << s("state != succeeded") << L{3, 4, 5};
        QTest::newRow("state:finished") << s("state:finished") << L{1, 2, 3};
        QTest::newRow("state:active") << s("state:active") << L{4};
        QTest::newRow("state:pending") << s("state:pending") << L{5};
        QTest::newRow("state ~") << s("state ~ ed$") << L{1, 2, 3, 5};
        QTest::newRow("node:") << s("node:gpu1") << L{1, 2};
        QTest::newRow("node = GPU2") << s("node = GPU2") << L{3, 5};
        QTest::newRow("node != gpu1") << s("node != gpu1") << L{3, 4, 5};
        QTest::newRow("node ~") << s("node~^gpu") << L{1, 2, 3, 5};
        QTest::newRow("queue:default") << s("queue:default") << L{1, 2, 3, 4};
        QTest::newRow("queue:long") << s("queue:long") << L{5};
        QTest::newRow("user:") << s("user:ana") << L{5};
        QTest::newRow("project:") << s("project:vision") << L{5};
        QTest::newRow("name~regex") << s("name~^digits.*1e-3") << L{2};
        QTest::newRow("name ~ quoted regex with parens") << s("name ~ \"\\(old\\)\"") << L{5};
        QTest::newRow("name: substring") << s("name:MLP") << L{1, 2, 3};
        QTest::newRow("name = whole name") << s("name = \"resnet50 debug\"") << L{4};
        QTest::newRow("name != ") << s("name != \"resnet50 debug\"") << L{1, 2, 3, 5};
        QTest::newRow("bare word") << s("resnet") << L{4};
        QTest::newRow("bare words and") << s("digits 0001") << L{1};
        QTest::newRow("quoted bare text") << s("\"(old) run\"") << L{5};
        QTest::newRow("single quotes") << s("'ResNet50 deb'") << L{4};
        QTest::newRow("id") << s("id >= 4") << L{4, 5};
        QTest::newRow("id =") << s("id = 2") << L{2};
        QTest::newRow("has:") << s("has:depth") << L{4};
        QTest::newRow("has: metric") << s("has:val_acc") << L{1, 2};
        QTest::newRow("or") << s("state:running or state:queued") << L{4, 5};
        QTest::newRow("OR uppercase") << s("node:gpu1 OR node:local") << L{1, 2, 4};
        QTest::newRow("and binds tighter than or") << s("node:gpu2 or node:gpu1 and lr > 5e-4") << L{2, 3, 5};
        QTest::newRow("parentheses") << s("(node:gpu2 or node:gpu1) and lr > 5e-4") << L{2, 3};
        QTest::newRow("implicit and") << s("tag:sweep node:gpu2") << L{3};
        QTest::newRow("not") << s("not tag:baseline") << L{3, 4};
        QTest::newRow("NOT not") << s("NOT not tag:baseline") << L{1, 2, 5};
        QTest::newRow("not (a or b)") << s("not (state:failed or state:queued)") << L{1, 2, 4};
        QTest::newRow("nested parens no spaces") << s("((lr<1e-3)and(tag:baseline))") << L{1};
        QTest::newRow("And keyword mixed case") << s("lr < 1 AnD optimizer=sgd") << L{3};
        QTest::newRow("word containing or") << s("order") << L{};
        QTest::newRow("no run") << s("lr > 1") << L{};
    }

    void matches()
    {
        QFETCH(QString, query);
        QFETCH(QList<RunId>, expected);
        QCOMPARE(matching(query), expected);
    }

    void errors_data()
    {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("error");

        QTest::newRow("no value") << s("lr <") << s("column 5: expected a value after '<'");
        QTest::newRow("no value before and")
                << s("lr < and tag:x") << s("column 6: expected a value after '<', found 'and'");
        QTest::newRow("value is a paren") << s("(lr <=)") << s("column 7: expected a value after '<='");
        QTest::newRow("value starts with op")
                << s("lr <= =3")
                << s("column 7: expected a value after '<=', found '=' (quote a value that starts with it)");
        QTest::newRow("no name") << s("< 3") << s("column 1: expected a name before '<'");
        QTest::newRow("lone !") << s("lr ! 3") << s("column 4: unknown operator '!' (use !=, !~ or not)");
        QTest::newRow("missing )") << s("(lr < 1 or tag:a") << s("column 17: missing ')' for the '(' at column 1");
        QTest::newRow("extra )") << s("lr < 1)") << s("column 7: unexpected ')' (no '(' to close)");
        QTest::newRow("empty parens") << s("tag:a and ()") << s("column 12: empty parentheses");
        QTest::newRow("dangling and") << s("tag:a and") << s("column 10: expected a term after 'and'");
        QTest::newRow("dangling or") << s("tag:a or ") << s("column 10: expected a term after 'or'");
        QTest::newRow("dangling not") << s("not") << s("column 4: expected a term after 'not'");
        QTest::newRow("leading and") << s("and tag:a") << s("column 1: expected a term at the start, found 'and'");
        QTest::newRow("and or") << s("tag:a and or tag:b") << s("column 11: expected a term after 'and', found 'or'");
        QTest::newRow("unterminated") << s("name = \"abc") << s("column 8: unterminated quoted text (no closing \")");
        QTest::newRow("unterminated bare") << s("tag:a 'x") << s("column 7: unterminated quoted text (no closing ')");
        QTest::newRow("unknown state")
                << s("state:runing")
                << s("column 7: unknown state 'runing' (queued, held, starting, running, succeeded, "
                     "failed, cancelled, unknown, active, pending, finished)");
        QTest::newRow("unknown field")
                << s("stat:running")
                << s("column 1: unknown field 'stat' before ':' (fields: tag, state, node, queue, user, "
                     "project, name, group, step, has; compare a param with '=': stat = ...)");
        QTest::newRow("ordering on state")
                << s("state < running") << s("column 7: '<' does not apply to state (use :, =, != or ~)");
        QTest::newRow("ordering on tag") << s("tag >= a")
                                         << s("column 5: '>=' does not apply to tag (use :, =, != or ~)");
        QTest::newRow("regex on metric") << s(
                "metric.loss ~ 1") << s("column 13: '~' does not apply to metric.loss (compare it with a number)");
        QTest::newRow("metric text") << s("metric.loss < low")
                                     << s("column 15: metric.loss compares with a number, not 'low'");
        QTest::newRow("id text") << s("id = abc") << s("column 6: id compares with a number, not 'abc'");
        QTest::newRow("metric. without key")
                << s("metric. < 1") << s("column 1: expected a metric name after 'metric.'");
        QTest::newRow("has with =") << s("has = lr") << s("column 5: 'has' takes ':' (has:lr), not '='");
        QTest::newRow("bad regex") << s("name ~ \"a(b\"")
                                   << s("column 12: invalid regular expression 'a(b': missing closing parenthesis");
        // Unquoted values end at a parenthesis, so an unquoted regex with one is a grouping error.
        QTest::newRow("unquoted regex paren") << s("name ~ a(b") << s("column 11: missing ')' for the '(' at column 9");
    }

    void errors()
    {
        QFETCH(QString, query);
        QFETCH(QString, error);
        auto q = RunQuery::parse(query);
        QVERIFY2(!q, qPrintable(q ? q->dump() : QString()));
        QCOMPARE(q.error().message, error);
    }

    void dumpShowsPrecedence_data()
    {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("tree");
        QTest::newRow("issue example") << s("lr < 1e-3 and tag:baseline")
                                       << s("(and (param lr < 1e-3) (tag = baseline))");
        QTest::newRow("and over or")
                << s("a or b c or not d")
                << s("(or (name contains a) (and (name contains b) (name contains c)) (not (name contains d)))");
        QTest::newRow("flattened and") << s("x=1 and y=2 and z=3")
                                       << s("(and (param x = 1) (param y = 2) (param z = 3))");
        QTest::newRow("parens") << s("not (x=1 or y:=2)") << QString(); // y:=2 is an error, checked below
        QTest::newRow("name forms") << s("name:a name=b name~c") << s("(and (name contains a) (name = b) (name ~ c))");
        QTest::newRow("quoted value kept") << s("opt = \"a b\"") << s("(param opt = \"a b\")");
        QTest::newRow("escapes") << s("name ~ \"\\d+\\\"x\"") << s("(name ~ \"\\\\d+\\\"x\")");
        QTest::newRow("== is =") << s("lr==2") << s("(param lr = 2)");
        QTest::newRow("empty") << s("") << s("(all)");
    }

    void dumpShowsPrecedence()
    {
        QFETCH(QString, query);
        QFETCH(QString, tree);
        auto q = RunQuery::parse(query);
        if (tree.isEmpty()) {
            QVERIFY(!q);
            return;
        }
        QVERIFY2(q, q ? "" : qPrintable(q.error().message));
        QCOMPARE(q->dump(), tree);
        QCOMPARE(q->text(), query);
    }

    void usesSpecLabels()
    {
        QVERIFY(!RunQuery::parse(u"lr < 1 and node:gpu1")->usesSpecLabels());
        QVERIFY(RunQuery::parse(u"lr < 1 or queue:long")->usesSpecLabels());
        QVERIFY(RunQuery::parse(u"project ~ vis")->usesSpecLabels());
        QVERIFY(RunQuery().isEmpty());
        QVERIFY(RunQuery::parse(u"  ")->isEmpty());
    }

    // Without labels, queue/user/project come from the run's stored spec text.
    void labelsFromSpecYaml()
    {
        RunRecord r;
        r.id = 9;
        r.name = s("x");
        r.specYaml = s(
                "name: x\ncommand: python3 train.py\nqueue: gpu-long\nuser: 'bob'\nproject: \"nlp\"\nparams:\n  queue: nope\n");
        QVERIFY(RunQuery::parse(u"queue:gpu-long and user:bob and project:nlp")->matches(r));
        QVERIFY(!RunQuery::parse(u"queue:default")->matches(r));
        const RunSpecLabels l = specLabelsOf(r.specYaml);
        QCOMPARE(l.queue, s("gpu-long"));
        QCOMPARE(l.user, s("bob"));
        QCOMPARE(l.project, s("nlp"));

        r.specYaml = s("name: x\ncommand: [python3, a.py]\n");
        QVERIFY(RunQuery::parse(u"queue:default")->matches(r));
        QVERIFY(!RunQuery::parse(u"user:bob")->matches(r));
        r.specYaml = s("queue: [unclosed\n");
        QCOMPARE(specLabelsOf(r.specYaml).queue, QString());
    }

    void runWithoutParamsOrMetrics()
    {
        RunRecord r;
        r.id = 1;
        r.name = s("plain");
        QVERIFY(RunQuery::parse(u"plain")->matches(r));
        QVERIFY(!RunQuery::parse(u"lr < 1")->matches(r));
        QVERIFY(RunQuery::parse(u"not lr < 1")->matches(r));
        QVERIFY(!RunQuery::parse(u"metric.loss < 1")->matches(r));
        QVERIFY(!RunQuery::parse(u"has:lr")->matches(r));
        QVERIFY(RunQuery::parse(u"tag != x")->matches(r));
    }

    void numbers_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("isNumber");
        QTest::addColumn<double>("value");
        QTest::newRow("1e-3") << s("1e-3") << true << 1e-3;
        QTest::newRow(".5") << s(".5") << true << 0.5;
        QTest::newRow("5.") << s("5.") << true << 5.0;
        QTest::newRow("-2") << s("-2") << true << -2.0;
        QTest::newRow("+2.5E+2") << s("+2.5E+2") << true << 250.0;
        QTest::newRow("spaces") << s(" 64 ") << true << 64.0;
        QTest::newRow("inf") << s("inf") << true << std::numeric_limits<double>::infinity();
        QTest::newRow("1e") << s("1e") << false << 0.0;
        QTest::newRow("++1") << s("++1") << false << 0.0;
        QTest::newRow("+-1") << s("+-1") << false << 0.0;
        QTest::newRow("0x10") << s("0x10") << false << 0.0;
        QTest::newRow("1,5") << s("1,5") << false << 0.0;
        QTest::newRow("adam") << s("adam") << false << 0.0;
        QTest::newRow("empty") << s("") << false << 0.0;
        QTest::newRow("non-ascii") << s("1\u00b2") << false << 0.0;
    }

    void numbers()
    {
        QFETCH(QString, text);
        QFETCH(bool, isNumber);
        QFETCH(double, value);
        const auto v = parseQueryNumber(text);
        QCOMPARE(v.has_value(), isNumber);
        if (isNumber)
            QCOMPARE(*v, value);
        QVERIFY(std::isnan(parseQueryNumber(u"nan").value_or(0)));
    }

    void groupKeys()
    {
        const QList<Fixture> runs = sweep();
        const RunGroupBy byLr{RunGroupBy::Kind::Param, s("lr")};
        // 1e-3 and 0.001 would be one group; .01 after 5e-4; missing last.
        QList<RunGroupKey> keys;
        for (const Fixture& f : runs)
            keys << runGroupKey(byLr, f.input());
        QCOMPARE(keys.at(0).label, s("0.0001"));
        QCOMPARE(*keys.at(2).number, 0.01);
        QVERIFY(keys.at(4).missing);
        QCOMPARE(keys.at(4).label, s("no lr"));
        QVERIFY(compareGroupKeys(keys.at(0), keys.at(3)) < 0); // 1e-4 < 5e-4
        QVERIFY(compareGroupKeys(keys.at(3), keys.at(1)) < 0); // 5e-4 < 1e-3
        QVERIFY(compareGroupKeys(keys.at(1), keys.at(2)) < 0); // 1e-3 < .01
        QVERIFY(compareGroupKeys(keys.at(2), keys.at(4)) < 0); // missing last
        QCOMPARE(compareGroupKeys(RunGroupKey{s("1e-3"), 1e-3, false}, RunGroupKey{s("0.001"), 0.001, false}), 0);
        QVERIFY(compareGroupKeys(RunGroupKey{s("10"), 10.0, false}, RunGroupKey{s("abc"), std::nullopt, false}) < 0);
        QCOMPARE(compareGroupKeys(RunGroupKey{s("Adam"), {}, false}, RunGroupKey{s("adam"), {}, false}), 0);

        const RunGroupBy byTag{RunGroupBy::Kind::Tag, {}};
        QCOMPARE(runGroupKey(byTag, runs.at(1).input()).label, s("baseline, sweep"));
        QVERIFY(runGroupKey(byTag, runs.at(3).input()).missing);
        QCOMPARE(compareGroupKeys(runGroupKey(byTag, runs.at(0).input()), runGroupKey(byTag, runs.at(4).input())), 0);

        const RunGroupBy byState{RunGroupBy::Kind::State, {}};
        // Lifecycle order: queued before running before succeeded before failed.
        QVERIFY(compareGroupKeys(runGroupKey(byState, runs.at(4).input()), runGroupKey(byState, runs.at(3).input()))
                < 0);
        QVERIFY(compareGroupKeys(runGroupKey(byState, runs.at(3).input()), runGroupKey(byState, runs.at(0).input()))
                < 0);
        QVERIFY(compareGroupKeys(runGroupKey(byState, runs.at(0).input()), runGroupKey(byState, runs.at(2).input()))
                < 0);
        QCOMPARE(runGroupKey(byState, runs.at(3).input()).label, s("running"));

        const RunGroupBy byQueue{RunGroupBy::Kind::Queue, {}};
        QCOMPARE(runGroupKey(byQueue, runs.at(0).input()).label, s("default"));
        QCOMPARE(runGroupKey(byQueue, runs.at(4).input()).label, s("long"));
        QCOMPARE(runGroupKey(RunGroupBy{RunGroupBy::Kind::Node, {}}, runs.at(3).input()).label, s("local"));
    }

    void groupByRunGroup()
    {
        // Pipelines, sweeps, attempts and gangs are the run groups
        // (RunRecord::groups), labelled from their runs' names; tags that
        // look like the old ones are only tags.
        using K = RunGroupKind;
        const auto keyOf
                = [](const QString& name, const QList<RunGroupMembership>& groups, const QStringList& tags = {}) {
                      RunRecord r;
                      r.name = name;
                      r.groups = groups;
                      r.tags = tags;
                      return runGroupKey(RunGroupBy{RunGroupBy::Kind::Group, {}}, RunQueryInput{&r});
                  };
        const RunGroupKey step = keyOf(s("digits-pipeline/train"), {{12, K::Pipeline, 0, s("train")}}, {s("baseline")});
        QCOMPARE(step.label, s("pipeline 12 digits-pipeline"));
        QCOMPARE(step.number, std::optional<double>(12));
        QCOMPARE(keyOf(s("digits-pipeline/shard[shard=2]"), {{12, K::Pipeline, 1, s("shard[shard=2]")}}).label,
                s("pipeline 12 digits-pipeline"));
        QCOMPARE(keyOf(s("digits-mlp[lr=0.01]"), {{7, K::Sweep, 1, s("lr=0.01")}}).label, s("sweep 7 digits-mlp"));
        QCOMPARE(keyOf(s("ddp#rank1"), {{40, K::Gang, 1, {}}}).label, s("gang 40 ddp"));
        QCOMPARE(keyOf(s("ddp"), {{40, K::Gang, 0, {}}}).label, s("gang 40 ddp"));
        QCOMPARE(keyOf(s("flaky"), {{41, K::Attempts, 2, {}}}).label, s("attempts 41 flaky"));
        // A gang's rank that is a pipeline's step goes with the pipeline.
        QCOMPARE(keyOf(s("p/train#rank1"), {{12, K::Pipeline, 0, s("train")}, {40, K::Gang, 1, {}}}).label,
                s("pipeline 12 p"));
        const RunGroupKey none = keyOf(s("alone"), {}, {s("pipeline:3"), s("sweep:4"), s("baseline")});
        QCOMPARE(none.label, s("no group"));
        QVERIFY(none.missing);
        QVERIFY(compareGroupKeys(
                        keyOf(s("a/b"), {{2, K::Pipeline, 0, s("b")}}), keyOf(s("a/b"), {{10, K::Pipeline, 0, s("b")}}))
                < 0);
    }

    void filterByGroupAndStep()
    {
        using K = RunGroupKind;
        RunRecord train;
        train.name = s("p/train#rank1");
        train.groups = {{12, K::Pipeline, 1, s("train")}, {40, K::Gang, 1, {}}};
        RunRecord eval;
        eval.name = s("p/eval[ds=a]");
        eval.groups = {{12, K::Pipeline, 2, s("eval[ds=a]")}};
        RunRecord alone;
        alone.name = s("alone");
        alone.tags = {s("step:train")};
        const auto matching = [&](const QString& text) {
            auto q = RunQuery::parse(text);
            if (!q) {
                qWarning("%s", qPrintable(q.error().message));
                return s("error");
            }
            QStringList names;
            for (const RunRecord* r : {&train, &eval, &alone})
                if (q->matches(RunQueryInput{r}))
                    names << r->name;
            return names.join(u',');
        };
        QCOMPARE(matching(s("group:12")), s("p/train#rank1,p/eval[ds=a]"));
        QCOMPARE(matching(s("group:40")), s("p/train#rank1"));
        QCOMPARE(matching(s("group = gang")), s("p/train#rank1"));
        QCOMPARE(matching(s("group:Pipeline")), s("p/train#rank1,p/eval[ds=a]"));
        QCOMPARE(matching(s("group != pipeline")), s("alone"));
        QCOMPARE(matching(s("group:13")), QString());
        QCOMPARE(matching(s("step:train")), s("p/train#rank1"));
        QCOMPARE(matching(s("step:eval")), s("p/eval[ds=a]"));
        QCOMPARE(matching(s("step ~ ^ev")), s("p/eval[ds=a]"));
        QCOMPARE(matching(s("step != eval")), s("p/train#rank1,alone"));
        QCOMPARE(RunQuery::parse(s("group:sweeps")).error().message,
                s("column 7: group takes a group's id or a kind (sweep, gang, pipeline, attempts), not 'sweeps'"));
        QCOMPARE(RunQuery::parse(s("group > 3")).error().message,
                s("column 7: '>' does not apply to group (use group:ID or group:KIND, = or !=)"));
        QVERIFY(!RunQuery::parse(s("group:1.5")));
    }

    void groupByIds()
    {
        for (const QString& id : {s("none"), s("param:lr"), s("param:model.depth"), s("tag"), s("state"), s("node"),
                     s("queue"), s("user"), s("project"), s("group")}) {
            auto by = RunGroupBy::fromId(id);
            QVERIFY2(by, qPrintable(id));
            QCOMPARE(by->id(), id);
        }
        QCOMPARE(RunGroupBy::fromId(u"param:lr")->param, s("lr"));
        QVERIFY(!RunGroupBy::fromId(u"param:"));
        QVERIFY(!RunGroupBy::fromId(u"colour"));
        QVERIFY(!RunGroupBy::fromId(u""));
    }
};

QTEST_GUILESS_MAIN(TestRunQuery)
#include "TestRunQuery.moc"
