#include "core/pipeline/Condition.h"

#include <QTest>

using namespace ty::pipeline;

namespace {
std::optional<QString> from(const QMap<QString, QString>& values, const QString& name)
{
    if (!values.contains(name))
        return std::nullopt;
    return values.value(name);
}
} // namespace

class TestPipelineCondition final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void evaluates_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("expected");
        QTest::newRow("and-not") << "train.succeeded && !lint.failed" << true;
        QTest::newRow("and-false") << "train.succeeded && lint.failed" << false;
        QTest::newRow("or") << "lint.failed || train.succeeded" << true;
        QTest::newRow("precedence") << "lint.failed && train.succeeded || true" << true;
        QTest::newRow("parens") << "lint.failed && (train.succeeded || true)" << false;
        QTest::newRow("numeric ==") << "steps.train.outputs.acc == 0.950" << true;
        QTest::newRow("numeric >=") << "steps.train.outputs.acc >= 0.9" << true;
        QTest::newRow("numeric <") << "steps.train.outputs.acc < 0.9" << false;
        QTest::newRow("text ==") << "params.mode == 'full'" << true;
        QTest::newRow("text != dq") << "params.mode != \"full\"" << false;
        QTest::newRow("param as truth") << "params.evaluate" << true;
        QTest::newRow("not param") << "!params.evaluate" << false;
        QTest::newRow("negative number") << "params.delta > -1" << true;
    }
    void evaluates()
    {
        QFETCH(QString, text);
        QFETCH(bool, expected);
        const QMap<QString, QString> values{{QStringLiteral("train.succeeded"), QStringLiteral("true")},
                {QStringLiteral("lint.failed"), QStringLiteral("false")},
                {QStringLiteral("steps.train.outputs.acc"), QStringLiteral("0.95")},
                {QStringLiteral("params.mode"), QStringLiteral("full")},
                {QStringLiteral("params.evaluate"), QStringLiteral("yes")},
                {QStringLiteral("params.delta"), QStringLiteral("-0.5")}};
        const auto c = Condition::parse(text);
        QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
        const auto v = c->evaluate([&](const QString& n) { return from(values, n); });
        QVERIFY2(v, qPrintable(v ? QString() : v.error().message));
        QCOMPARE(*v, expected);
    }

    void namesInOrderOnce()
    {
        const auto c = Condition::parse(QStringLiteral("a.succeeded && (b.failed || !a.succeeded) && c.cached"));
        QVERIFY(c);
        QCOMPARE(c->names(),
                (QStringList{QStringLiteral("a.succeeded"), QStringLiteral("b.failed"), QStringLiteral("c.cached")}));
    }

    void parseErrorsSayWhere_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("offset");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << "  " << 0 << "empty";
        QTest::newRow("dangling and") << "a.succeeded &&" << 14 << "ends where a value";
        QTest::newRow("unclosed paren") << "(a.succeeded" << 0 << "never closed";
        QTest::newRow("unclosed quote") << "p == 'x" << 5 << "never closed";
        QTest::newRow("junk") << "a.succeeded # b" << 12 << "unexpected '# b'";
        QTest::newRow("bad number") << "p > 1.2.3x" << 4 << "not a number";
        QTest::newRow("single &") << "a & b" << 2 << "unexpected '& b'";
    }
    void parseErrorsSayWhere()
    {
        QFETCH(QString, text);
        QFETCH(int, offset);
        QFETCH(QString, message);
        const auto c = Condition::parse(text);
        QVERIFY(!c);
        QCOMPARE(c.error().offset, offset);
        QVERIFY2(c.error().message.contains(message), qPrintable(c.error().message));
    }

    void evaluationErrorsNameTheValue()
    {
        const QMap<QString, QString> values{{QStringLiteral("params.mode"), QStringLiteral("full")}};
        const auto lookup = [&](const QString& n) { return from(values, n); };
        auto v = Condition::parse(QStringLiteral("params.mode"))->evaluate(lookup);
        QVERIFY(!v);
        QVERIFY2(v.error().message.contains(QStringLiteral("'params.mode' is 'full', which is neither true nor false")),
                qPrintable(v.error().message));
        v = Condition::parse(QStringLiteral("params.mode > 3"))->evaluate(lookup);
        QVERIFY(!v);
        QVERIFY2(v.error().message.contains(QStringLiteral("'>' compares numbers, and 'full' is not one")),
                qPrintable(v.error().message));
        v = Condition::parse(QStringLiteral("params.missing == 1"))->evaluate(lookup);
        QVERIFY(!v);
        QVERIFY2(v.error().message.contains(QStringLiteral("'params.missing' has no value")),
                qPrintable(v.error().message));
    }

    void shortCircuitSkipsTheOtherSide()
    {
        // `||` with a true left side never looks the right one up (a step
        // that was skipped has no outputs to compare).
        const QMap<QString, QString> values{{QStringLiteral("a.succeeded"), QStringLiteral("true")}};
        const auto v = Condition::parse(QStringLiteral("a.succeeded || steps.b.outputs.n > 3"))
                               ->evaluate([&](const QString& n) { return from(values, n); });
        QVERIFY(v);
        QVERIFY(*v);
    }
};

QTEST_GUILESS_MAIN(TestPipelineCondition)
#include "TestPipelineCondition.moc"
