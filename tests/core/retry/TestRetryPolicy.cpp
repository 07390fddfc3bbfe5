// The retry policy (issue #25): its defaults, what `on` covers, the backoff
// and jitter arithmetic to the ms, and the policy as a job spec writes it
// (retry, deadline, max_run_time): good specs, each bad one with its exact
// error, and the spec writer's round trip.
#include "core/retry/RetryPolicy.h"
#include "core/spec/JobSpec.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace ty;

namespace {
Result<JobSpec> parse(const QString& yaml)
{
    return parseJobSpec(yaml, QStringLiteral("job.yaml"), QStringLiteral("/"));
}

QList<RetryClass> classes(std::initializer_list<RetryClass> list)
{
    return QList<RetryClass>(list);
}
} // namespace

class TestRetryPolicy final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void defaults()
    {
        const RetryPolicy p;
        QCOMPARE(p.limit, 3);
        QCOMPARE(p.on,
                classes({RetryClass::Failed, RetryClass::Signal, RetryClass::Oom, RetryClass::CudaOom, RetryClass::Nccl,
                        RetryClass::Timeout, RetryClass::NodeLost, RetryClass::Preempted}));
        QCOMPARE(p.backoff.durationMs, 30'000);
        QCOMPARE(p.backoff.factor, 2.0);
        QCOMPARE(p.backoff.maxMs, 600'000);
        QCOMPARE(p.jitter, 0.0);
        QCOMPARE(p.infraLimit, std::nullopt);
        const RetryPolicy none = RetryPolicy::none();
        QCOMPARE(none.limit, 0);
        QCOMPARE(none.infraLimit, std::optional<int>(0));
    }

    void covers()
    {
        RetryPolicy p;
        p.on = {RetryClass::Oom};
        QVERIFY(p.covers(RetryClass::Oom));
        QVERIFY(p.covers(RetryClass::CudaOom)); // `oom` means both
        QVERIFY(!p.covers(RetryClass::Failed));
        QVERIFY(!p.covers(RetryClass::Timeout));
        p.on = {RetryClass::CudaOom};
        QVERIFY(p.covers(RetryClass::CudaOom));
        QVERIFY(!p.covers(RetryClass::Oom)); // `cuda_oom` alone is CUDA's only
        // Infra endings are covered whatever `on` says; their budget decides.
        p.on = {};
        QVERIFY(p.covers(RetryClass::NodeLost));
        QVERIFY(p.covers(RetryClass::Preempted));
        QVERIFY(!p.covers(RetryClass::Failed));
        // Never, whatever is listed.
        p.on = defaultRetryOn() << RetryClass::Cancelled << RetryClass::Succeeded << RetryClass::Unschedulable;
        QVERIFY(!p.covers(RetryClass::Cancelled));
        QVERIFY(!p.covers(RetryClass::Succeeded));
        QVERIFY(!p.covers(RetryClass::Unschedulable));
    }

    void backoffWaits()
    {
        const RetryBackoff b{30'000, 2.0, 600'000};
        // duration·factor^(n-1): the first wait is `duration` (argo#3513).
        const QList<qint64> want{30'000, 60'000, 120'000, 240'000, 480'000, 600'000, 600'000};
        for (int n = 1; n <= want.size(); ++n)
            QCOMPARE(backoffWaitMs(b, n), want.at(n - 1));
        QCOMPARE(backoffWaitMs(b, 0), 30'000); // less than 1 counts as 1
        QCOMPARE(backoffWaitMs(b, -5), 30'000);
        QCOMPARE(backoffWaitMs(b, 10'000), 600'000); // 2^9999 is inf in double: the cap, never an overflow
        QCOMPARE(backoffWaitMs(b, std::numeric_limits<int>::max()), 600'000);
        QCOMPARE(backoffWaitMs({30'000, 1.5, 600'000}, 3), 67'500);
        QCOMPARE(backoffWaitMs({30'000, 1.0, 600'000}, 9), 30'000);
        QCOMPARE(backoffWaitMs({0, 2.0, 0}, 4), 0);
        QCOMPARE(backoffWaitMs({1'000, 0.5, 10'000}, 3), 1'000);          // a factor below 1 is 1
        QCOMPARE(backoffWaitMs({1'000, std::nan(""), 10'000}, 3), 1'000); // and so is NaN
        QCOMPARE(backoffWaitMs({60'000, 2.0, 10'000}, 1), 10'000);        // max below duration caps even the first
    }

    void jitter()
    {
        QCOMPARE(jitteredWaitMs(60'000, 0.1, 0.0), 60'000);
        QCOMPARE(jitteredWaitMs(60'000, 0.1, 1.0), 66'000);
        QCOMPARE(jitteredWaitMs(60'000, 0.1, -1.0), 54'000);
        QCOMPARE(jitteredWaitMs(60'000, 0.1, 0.5), 63'000);
        QCOMPARE(jitteredWaitMs(60'000, 0.1, -0.25), 58'500);
        QCOMPARE(jitteredWaitMs(60'000, 0.1, 7.0), 66'000); // a sample is clamped to [-1, 1]
        QCOMPARE(jitteredWaitMs(60'000, 0.1, -7.0), 54'000);
        QCOMPARE(jitteredWaitMs(60'000, 0.1, std::nan("")), 60'000);
        QCOMPARE(jitteredWaitMs(60'000, 2.0, -1.0), 0); // jitter is clamped to [0, 1]: never negative
        QCOMPARE(jitteredWaitMs(60'000, -1.0, 1.0), 60'000);
        QCOMPARE(jitteredWaitMs(1'001, 0.1, 0.5), 1'051); // 1051.05 rounds to the ms
        QCOMPARE(jitteredWaitMs(-5, 0.1, 1.0), 0);
    }

    void durationText()
    {
        QCOMPARE(retryDurationText(0), QStringLiteral("0s"));
        QCOMPARE(retryDurationText(30'000), QStringLiteral("30s"));
        QCOMPARE(retryDurationText(90'000), QStringLiteral("1m30s"));
        QCOMPARE(retryDurationText(6 * 3'600'000), QStringLiteral("6h"));
        QCOMPARE(retryDurationText(26 * 3'600'000), QStringLiteral("1d2h"));
        QCOMPARE(retryDurationText(2'500), QStringLiteral("2.5s"));
        QCOMPARE(retryDurationText(61'050), QStringLiteral("1m1.05s"));
        QCOMPARE(retryDurationText(3'600'007), QStringLiteral("1h0.007s"));
    }

    // The issue's own example, with deadline and max_run_time.
    void issueExample()
    {
        const auto spec = parse(
                QStringLiteral("command: [python3, train.py]\n"
                               "retry: {limit: 3, on: [failed, oom, node_lost, preempted, timeout],\n"
                               "        backoff: {duration: 30s, factor: 2, max: 10m}, jitter: 0.1, infra_limit: 5}\n"
                               "deadline: 6h\n"
                               "max_run_time: 2h\n"));
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QVERIFY(spec->retry);
        const RetryPolicy& p = *spec->retry;
        QCOMPARE(p.limit, 3);
        QCOMPARE(p.on,
                classes({RetryClass::Failed, RetryClass::Oom, RetryClass::NodeLost, RetryClass::Preempted,
                        RetryClass::Timeout}));
        QVERIFY(p.covers(RetryClass::CudaOom)); // through `oom`
        QVERIFY(!p.covers(RetryClass::Nccl));
        QCOMPARE(p.backoff, (RetryBackoff{30'000, 2.0, 600'000}));
        QCOMPARE(p.jitter, 0.1);
        QCOMPARE(p.infraLimit, std::optional<int>(5));
        QCOMPARE(spec->deadlineSec, std::optional<qint64>(6 * 3600));
        QCOMPARE(spec->maxRunTimeSec, std::optional<qint64>(2 * 3600));
    }

    void shortForms()
    {
        // `retry: 3` is `retry: {limit: 3}`: every other key its default.
        auto spec = parse(QStringLiteral("command: [ls]\nretry: 3\n"));
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        RetryPolicy want;
        want.limit = 3;
        QCOMPARE(*spec->retry, want);
        spec = parse(QStringLiteral("command: [ls]\nretry: 0\n"));
        QVERIFY(spec);
        want.limit = 0;
        QCOMPARE(*spec->retry, want); // code failures never; node loss and preemption still (infra_limit)
        // An empty `retry:` and `retry: {}`: all defaults.
        for (const char* text : {"command: [ls]\nretry:\n", "command: [ls]\nretry: {}\n"}) {
            spec = parse(QString::fromLatin1(text));
            QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
            QCOMPARE(*spec->retry, RetryPolicy());
        }
        // No `retry:`: no policy, and no time bounds.
        spec = parse(QStringLiteral("command: [ls]\n"));
        QVERIFY(spec);
        QCOMPARE(spec->retry, std::nullopt);
        QCOMPARE(spec->deadlineSec, std::nullopt);
        QCOMPARE(spec->maxRunTimeSec, std::nullopt);
        // One class as a plain string; `on: []` leaves only infra retries; `unlimited`.
        spec = parse(QStringLiteral("command: [ls]\nretry: {on: cuda_oom, infra_limit: unlimited}\n"));
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->retry->on, classes({RetryClass::CudaOom}));
        QCOMPARE(spec->retry->infraLimit, std::nullopt);
        spec = parse(QStringLiteral("command: [ls]\nretry:\n  on: []\n  infra_limit: 0\n"));
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QVERIFY(spec->retry->on.isEmpty());
        QCOMPARE(spec->retry->infraLimit, std::optional<int>(0));
    }

    void backoffDefaults()
    {
        // A missing key takes its default...
        auto spec = parse(QStringLiteral("command: [ls]\nretry: {backoff: {factor: 3}}\n"));
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->retry->backoff, (RetryBackoff{30'000, 3.0, 600'000}));
        spec = parse(QStringLiteral("command: [ls]\nretry: {backoff: {duration: 1m}}\n"));
        QVERIFY(spec);
        QCOMPARE(spec->retry->backoff, (RetryBackoff{60'000, 2.0, 600'000}));
        // ...but a duration longer than the default cap, written without a
        // max, is a constant wait rather than an error.
        spec = parse(QStringLiteral("command: [ls]\nretry: {backoff: {duration: 30m}}\n"));
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->retry->backoff, (RetryBackoff{1'800'000, 2.0, 1'800'000}));
        // Equal is fine, and a fractional factor, and a zero duration.
        spec = parse(QStringLiteral("command: [ls]\nretry: {backoff: {duration: 0s, factor: 1.5, max: 0s}}\n"));
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->retry->backoff, (RetryBackoff{0, 1.5, 0}));
    }

    void badSpecs_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown class")
                << QStringLiteral("command: [ls]\nretry: {on: [failed, nodelost]}\n")
                << QStringLiteral("job.yaml:2:22: unknown class 'nodelost' in 'retry.on' (did you mean 'node_lost'?)");
        QTest::newRow("unknown class far from any")
                << QStringLiteral("command: [ls]\nretry:\n  on:\n    - segfault\n")
                << QStringLiteral(
                           "job.yaml:4:7: unknown class 'segfault' in 'retry.on' (known: failed, signal, oom, cuda_oom, nccl, timeout, node_lost, preempted)");
        QTest::newRow("a failure kind's name")
                << QStringLiteral("command: [ls]\nretry: {on: [time_limit]}\n")
                << QStringLiteral(
                           "job.yaml:2:14: 'time_limit' is a failure kind; 'retry.on' names its class, 'timeout'");
        QTest::newRow("exit_code is part of failed")
                << QStringLiteral("command: [ls]\nretry: {on: [exit_code]}\n")
                << QStringLiteral(
                           "job.yaml:2:14: 'exit_code' is a failure kind; 'retry.on' names its class, 'failed' (exit code, traceback, failed start, other)");
        QTest::newRow("cancelled")
                << QStringLiteral("command: [ls]\nretry: {on: [failed, cancelled]}\n")
                << QStringLiteral(
                           "job.yaml:2:22: 'cancelled' cannot be in 'retry.on': a cancel is the user's, never retried");
        QTest::newRow("succeeded")
                << QStringLiteral("command: [ls]\nretry: {on: succeeded}\n")
                << QStringLiteral(
                           "job.yaml:2:13: 'succeeded' cannot be in 'retry.on': a run that succeeded is not retried");
        QTest::newRow("unschedulable")
                << QStringLiteral("command: [ls]\nretry: {on: [unschedulable]}\n")
                << QStringLiteral(
                           "job.yaml:2:14: 'unschedulable' cannot be in 'retry.on': no node could ever hold the run, nor a retry of it");
        QTest::newRow("listed twice") << QStringLiteral("command: [ls]\nretry: {on: [oom, failed, oom]}\n")
                                      << QStringLiteral("job.yaml:2:27: 'oom' is listed twice in 'retry.on'");
        QTest::newRow("on not a list")
                << QStringLiteral("command: [ls]\nretry: {on: {failed: 1}}\n")
                << QStringLiteral(
                           "job.yaml:2:13: 'retry.on' must be a list of classes like [failed, oom] ([] for none), not a mapping");
        QTest::newRow("on null")
                << QStringLiteral("command: [ls]\nretry:\n  on:\n  limit: 2\n")
                << QStringLiteral(
                           "job.yaml:3:3: 'retry.on' must be a list of classes like [failed, oom] ([] for none), not a null");
        QTest::newRow("on item a list")
                << QStringLiteral("command: [ls]\nretry: {on: [[failed]]}\n")
                << QStringLiteral("job.yaml:2:14: every item of 'retry.on' must be a class name, not a list");
        QTest::newRow("negative limit") << QStringLiteral("command: [ls]\nretry:\n  limit: -1\n")
                                        << QStringLiteral(
                                                   "job.yaml:3:10: 'retry.limit' must be between 0 and 10000, got -1");
        QTest::newRow("negative bare") << QStringLiteral("command: [ls]\nretry: -2\n")
                                       << QStringLiteral("job.yaml:2:8: 'retry' must be between 0 and 10000, got -2");
        QTest::newRow("limit not a number")
                << QStringLiteral("command: [ls]\nretry: {limit: many}\n")
                << QStringLiteral("job.yaml:2:16: 'retry.limit' must be an integer, got 'many'");
        QTest::newRow("bare word")
                << QStringLiteral("command: [ls]\nretry: yes\n")
                << QStringLiteral(
                           "job.yaml:2:8: 'retry' must be a number of retries (retry: 3) or a mapping (limit, on, backoff, jitter, infra_limit), got 'yes'");
        QTest::newRow("a list")
                << QStringLiteral("command: [ls]\nretry: [failed]\n")
                << QStringLiteral(
                           "job.yaml:2:8: 'retry' must be a number of retries (retry: 3) or a mapping (limit, on, backoff, jitter, infra_limit), not a list");
        QTest::newRow("factor below 1")
                << QStringLiteral("command: [ls]\nretry:\n  backoff: {duration: 30s, factor: 0.5}\n")
                << QStringLiteral(
                           "job.yaml:3:36: 'retry.backoff.factor' must be at least 1 (1: the same wait each time), got 0.5");
        QTest::newRow("factor not a number")
                << QStringLiteral("command: [ls]\nretry: {backoff: {factor: inf}}\n")
                << QStringLiteral("job.yaml:2:27: 'retry.backoff.factor' must be a number, got 'inf'");
        QTest::newRow("jitter above 1")
                << QStringLiteral("command: [ls]\nretry: {jitter: 1.5}\n")
                << QStringLiteral(
                           "job.yaml:2:17: 'retry.jitter' must be between 0 and 1 (a fraction of each wait), got 1.5");
        QTest::newRow("jitter negative")
                << QStringLiteral("command: [ls]\nretry: {jitter: -0.1}\n")
                << QStringLiteral(
                           "job.yaml:2:17: 'retry.jitter' must be between 0 and 1 (a fraction of each wait), got -0.1");
        QTest::newRow("max below duration")
                << QStringLiteral("command: [ls]\nretry:\n  backoff:\n    duration: 1m\n    max: 30s\n")
                << QStringLiteral(
                           "job.yaml:5:10: 'retry.backoff.max' (30s) is shorter than 'retry.backoff.duration' (1m): the first wait would pass the cap");
        QTest::newRow("max below default duration")
                << QStringLiteral("command: [ls]\nretry: {backoff: {max: 10s}}\n")
                << QStringLiteral(
                           "job.yaml:2:24: 'retry.backoff.max' (10s) is shorter than 'retry.backoff.duration' (30s, its default): the first wait would pass the cap");
        QTest::newRow("bad duration")
                << QStringLiteral("command: [ls]\nretry: {backoff: {duration: soon}}\n")
                << QStringLiteral(
                           "job.yaml:2:29: 'retry.backoff.duration' must be a duration such as 90s, 30m, 2h or 1h30m, got 'soon'");
        QTest::newRow("unknown retry key")
                << QStringLiteral("command: [ls]\nretry: {limit: 2, retry_on: [oom]}\n")
                << QStringLiteral(
                           "job.yaml:2:19: unknown key 'retry_on' in 'retry' (allowed: limit, on, backoff, jitter, infra_limit)");
        QTest::newRow("retry key typo")
                << QStringLiteral("command: [ls]\nretry: {limt: 2}\n")
                << QStringLiteral("job.yaml:2:9: unknown key 'limt' in 'retry' (did you mean 'limit'?)");
        QTest::newRow("unknown backoff key")
                << QStringLiteral("command: [ls]\nretry:\n  backoff: {duration: 30s, maxDuration: 10m}\n")
                << QStringLiteral(
                           "job.yaml:3:28: unknown key 'maxDuration' in 'retry.backoff' (allowed: duration, factor, max)");
        QTest::newRow("backoff typo")
                << QStringLiteral("command: [ls]\nretry: {backoff: {factr: 2}}\n")
                << QStringLiteral("job.yaml:2:19: unknown key 'factr' in 'retry.backoff' (did you mean 'factor'?)");
        QTest::newRow("backoff a scalar")
                << QStringLiteral("command: [ls]\nretry: {backoff: 30s}\n")
                << QStringLiteral(
                           "job.yaml:2:18: 'retry.backoff' must be a mapping (duration, factor, max), not a scalar");
        QTest::newRow("infra_limit negative")
                << QStringLiteral("command: [ls]\nretry: {infra_limit: -1}\n")
                << QStringLiteral("job.yaml:2:22: 'retry.infra_limit' must be between 0 and 10000, got -1");
        QTest::newRow("infra_limit a word")
                << QStringLiteral("command: [ls]\nretry: {infra_limit: always}\n")
                << QStringLiteral(
                           "job.yaml:2:22: 'retry.infra_limit' must be a number of retries or 'unlimited', got 'always'");
        QTest::newRow("duplicate") << QStringLiteral("command: [ls]\nretry:\n  limit: 1\n  limit: 2\n")
                                   << QStringLiteral("job.yaml:4:3: duplicate key 'limit'");
        QTest::newRow("deadline zero") << QStringLiteral("command: [ls]\ndeadline: 0s\n")
                                       << QStringLiteral("job.yaml:2:11: 'deadline' must be longer than 0s");
        QTest::newRow("max_run_time words")
                << QStringLiteral("command: [ls]\nmax_run_time: two hours\n")
                << QStringLiteral(
                           "job.yaml:2:15: 'max_run_time' must be a duration such as 90s, 30m, 2h or 1h30m, got 'two hours'");
        QTest::newRow("top-level typo") << QStringLiteral("command: [ls]\nretyr: 3\n")
                                        << QStringLiteral("job.yaml:2:1: unknown key 'retyr' (did you mean 'retry'?)");
        QTest::newRow("max_run_time typo")
                << QStringLiteral("command: [ls]\nmax_runtime: 2h\n")
                << QStringLiteral("job.yaml:2:1: unknown key 'max_runtime' (did you mean 'max_run_time'?)");
    }

    void badSpecs()
    {
        QFETCH(QString, yaml);
        QFETCH(QString, message);
        const auto spec = parse(yaml);
        QVERIFY(!spec);
        QCOMPARE(spec.error().message, message);
    }

    // toYaml writes every retry key (defaults too: the stored text records
    // what applied), and the text parses back to the same policy.
    void roundTrip_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::newRow("issue example") << QStringLiteral(
                "command: [ls]\n"
                "retry: {limit: 3, on: [failed, oom, node_lost, preempted, timeout],\n"
                "        backoff: {duration: 30s, factor: 2, max: 10m}, jitter: 0.1, infra_limit: 5}\n"
                "deadline: 6h\nmax_run_time: 2h\n");
        QTest::newRow("bare") << QStringLiteral("command: [ls]\nretry: 2\n");
        QTest::newRow("odd numbers") << QStringLiteral(
                "command: [ls]\nretry: {on: [], backoff: {duration: 1h30m, factor: 1.25}, jitter: 0.333}\n");
        QTest::newRow("only bounds") << QStringLiteral("command: [ls]\ndeadline: 1d\n");
    }

    void roundTrip()
    {
        QFETCH(QString, yaml);
        const auto spec = parse(yaml);
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        const QString written = toYaml(*spec);
        const auto again = parse(written);
        QVERIFY2(again, again ? "" : qPrintable(again.error().message + u'\n' + written));
        QCOMPARE(again->retry, spec->retry);
        QCOMPARE(again->deadlineSec, spec->deadlineSec);
        QCOMPARE(again->maxRunTimeSec, spec->maxRunTimeSec);
    }

    void writtenText()
    {
        const auto spec = parse(QStringLiteral("command: [ls]\nretry: 2\ndeadline: 6h\nmax_run_time: 2h\n"));
        QVERIFY(spec);
        const QString text = toYaml(*spec);
        QVERIFY2(
                text.contains(QStringLiteral(
                        "retry:\n  limit: 2\n  on: [failed, signal, oom, cuda_oom, nccl, timeout, node_lost, preempted]\n"
                        "  backoff: {duration: 30s, factor: 2, max: 600s}\n  jitter: 0\n  infra_limit: unlimited\n"
                        "deadline: 21600s\nmax_run_time: 7200s\n")),
                qPrintable(text));
    }
};

QTEST_GUILESS_MAIN(TestRetryPolicy)
#include "TestRetryPolicy.moc"
