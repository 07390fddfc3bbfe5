#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/pipeline/PipelineSpec.h"

#include <QList>
#include <QMap>
#include <QString>

#include <functional>

namespace ty::pipeline {

// One step's state. Cached: not run, a memoized result reused (core/memo).
enum class StepState { Waiting, Running, Succeeded, Failed, Skipped, Cached, Cancelled };
QString stepStateName(StepState state); // "waiting", "running", "succeeded", ...
std::optional<StepState> stepStateFromName(const QString& name);
bool isEnded(StepState state);

enum class PipelineState { Running, Succeeded, Failed, Cancelled };
QString pipelineStateName(PipelineState state);

// One launch of a step: a step without `for_each` has one instance, a
// fan-out step one per combination of its lists (the last name varying
// fastest, values in the order written).
struct StepInstance {
    int step = 0;                      // index into PipelineSpec::steps
    int item = -1;                     // index of the combination; -1 without for_each
    QMap<QString, QString> itemValues; // "shard" -> "2"
    StepState state = StepState::Waiting;
    RunId run = 0;                  // the run that ran it (0: none, or not yet)
    QString reason;                 // why it was skipped, failed, cached; what a waiting or running one does
    QMap<QString, QString> outputs; // "outputs.rows" -> "1797", "metrics.val_accuracy.max" -> "0.97"
};

// Which steps of a pipeline run next: the pure core of a pipeline's
// execution (the service's PipelineRunner submits, watches and records).
//
// Rules (#24):
// - A step waits until every step it depends on (its `upstream`) has ended.
// - `depends: [a, b]` (and every step whose outputs or metrics it uses):
//   it runs when each of them succeeded or was cached, or failed while
//   marked `continue_on: failed`; otherwise it is skipped, saying which
//   upstream step failed or was skipped.
// - `depends: "<condition>"`: it runs when the condition over STEP.succeeded
//   (cached counts as succeeded), STEP.failed, STEP.skipped, STEP.cached
//   holds, else it is skipped.
// - `when:` false skips the instance; a `when:` that cannot be evaluated
//   fails it, saying why.
// - fail_fast (default): after a failure not marked continue_on, no step
//   starts again (those waiting are skipped); running ones finish. Without
//   fail_fast independent branches run on; the pipeline still ends failed.
// - A step's state over its instances: all skipped -> skipped (a fan-out
//   whose items were all skipped is not a success), any failed -> failed,
//   all cached -> cached, else succeeded.
// - A fan-out step's output as seen downstream is the JSON list of its
//   instances' values (gather), in item order, skipped instances left out.
// Not thread-safe; one owner.
// Why step `step` of `spec` may never go to Slurm before its upstream steps
// ended (empty: it may, when startEarly() finds its upstream queued): it
// has no upstream step; it is memoized (its key takes its upstream's
// results); it takes a value from an upstream step's outputs or metrics
// (command, env, params, `when:`); its `depends:` is a condition (it may run
// after a failure); an upstream step has `continue_on: failed` (the same)
// or `retry:` (a retried attempt is a new Slurm job, and afterok on the
// failed one would cancel this one). Conservative: what Slurm's afterok
// would do differently from the rules above is never asked of it.
QString earlyStartObstacle(const PipelineSpec& spec, int step);

class PipelineProgress {
public:
    explicit PipelineProgress(const PipelineSpec& spec);

    const PipelineSpec& spec() const { return m_spec; }
    const QList<StepInstance>& instances() const { return m_instances; }

    struct Decision {
        QList<int> start;   // instances to launch now (their state is still Waiting: setRunning/setEnded them)
        QList<int> skipped; // instances just skipped (state Skipped, reason set)
        QList<int> failed;  // instances failed without running (a `when` that could not be evaluated)
    };
    // Moves the pipeline on as far as the ended steps allow. Call after each
    // change; an instance is offered in `start` once (until it is set).
    Decision advance();

    // Instances that may be submitted now, before their upstream steps have
    // ended, to wait in Slurm's queue behind their upstream runs' jobs
    // (--dependency=afterok; the runner asks only on a Slurm node): waiting
    // and not yet offered, their step passing earlyStartObstacle(), every
    // instance of every upstream step succeeded, cached, or running with
    // `queued(instance)` true (its run is a Slurm job the dependency can
    // name), at least one of them running; no upstream step (transitively)
    // that writes outputs (artifacts, output params' files: staged into the
    // step's workdir before it starts) still to end; a `when:` that holds
    // now (over params and items: it has no step reference). Nothing while
    // fail_fast has stopped the pipeline or it was cancelled. They are
    // offered once, as advance()'s `start`.
    QList<int> startEarly(const std::function<bool(int instance)>& queued);

    void setRunning(int instance, RunId run);
    // Says why a waiting instance that was offered still waits (its state
    // stays Waiting; it is not offered again).
    void setWaitingReason(int instance, const QString& reason);
    void setEnded(int instance, StepState state, const QString& reason, const QMap<QString, QString>& outputs = {});
    // What a waiting or running instance is doing ("copying its inputs to
    // its node: 40 % of 120.0 MiB"; empty: nothing to say). Ended ones keep
    // their reason.
    void setNote(int instance, const QString& note);
    // Stops the pipeline: waiting instances become Cancelled. Returns the
    // instances still running (the caller cancels their runs).
    QList<int> cancel();

    // A step's state over its instances (Waiting while none has started).
    StepState stepState(int step) const;
    PipelineState state() const;
    // fail_fast tripped: nothing new may start (stopReason() says why).
    bool stopped() const { return m_stopped; }
    const QString& stopReason() const { return m_stopReason; }

    // The values of the instance's references (PipelineSpec.h Reference),
    // for StepJob::instantiate, and the params it receives (the pipeline's
    // params its command references, and its item values).
    QMap<QString, QString> valuesFor(int instance) const;
    QMap<QString, QString> paramsFor(int instance) const;
    // "train", "shard[shard=2]": how runs and messages name an instance.
    QString instanceName(int instance) const;

private:
    std::optional<QString> lookup(int instance, const QString& name) const;
    QList<int> instancesOf(int step) const;
    // A failure not marked continue_on stops new starts under fail_fast.
    void noteFailure(int instance);

    PipelineSpec m_spec;
    QList<StepInstance> m_instances;
    QSet<int> m_offered;
    bool m_stopped = false; // fail_fast tripped: no new starts
    bool m_cancelled = false;
    QString m_stopReason;
};

} // namespace ty::pipeline
