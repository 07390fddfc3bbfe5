#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QMap>
#include <QString>
#include <QStringView>

#include <memory>

namespace ty {

// The parts of a run's job spec a query can name that RunRecord lacks. Read
// from the stored spec text (RunRecord::specYaml) by specLabelsOf().
struct RunSpecLabels {
    QString queue; // empty = the default queue
    QString user;
    QString project;
};

// The top-level `queue`, `user` and `project` scalars of a stored job spec.
// Text that is not YAML, or lacks them, gives empty fields (never an error:
// the spec was validated when the run was submitted).
RunSpecLabels specLabelsOf(const QString& specYaml);

// What a query looks at for one run. Only `run` is required; a null map is
// empty; null `labels` are read from run->specYaml when a query needs them.
struct RunQueryInput {
    const RunRecord* run = nullptr;
    const QMap<QString, QString>* params = nullptr;     // the run's params (ResultStore::params)
    const QMap<QString, MetricPoint>* latest = nullptr; // latest point per metric key
    const RunSpecLabels* labels = nullptr;
};

// A filter over runs, written the way one types into a search box:
//
//   lr < 1e-3 and tag:baseline
//   state:running or (state:failed and node:gpu1)
//   optimizer = adam  batch_size >= 64  not name~"^debug"
//   metric.val_acc > 0.9   resnet
//
// Terms
//   NAME OP VALUE    a param, OP one of < <= > >= = == != ~ !~. Compares as
//                    numbers when both the param's value and VALUE are
//                    numbers (any float form: 1e-3, .5, -2, 3.), else as text
//                    (case-insensitive). ~ is a case-insensitive, unanchored
//                    regular expression search (QRegularExpression, i.e.
//                    PCRE2), !~ its negation. A run without the param fails
//                    every comparison (so `not lr < 1` keeps it).
//                    `param.NAME` / `params.NAME` names a param whose name is
//                    also a field below (`param.state = x`).
//   metric.KEY OP NUMBER   the latest value of a metric (`metrics.` too); < <=
//                    > >= = == != only; a run without the key fails.
//   tag:T            the run has tag T (case-insensitive); also tag = T,
//                    tag != T (no tag is T), tag ~ RE (some tag matches).
//   state:S          S a run state (queued, held, starting, running,
//                    succeeded, failed, cancelled, unknown) or a group of
//                    them: active (starting, running), pending (queued,
//                    held), finished (succeeded, failed, cancelled).
//                    Also state = S, state != S, state ~ RE.
//   node:N, queue:Q, user:U, project:P   equality, case-insensitive (=, !=
//                    and ~ too); the default queue is `default`.
//   name:TEXT        the name contains TEXT; name = TEXT is the whole name;
//                    name ~ RE.
//   id OP NUMBER     the run's database id.
//   group:G          the run is in run group G (its id: group:12) or in a
//                    group of kind G (group:sweep, gang, pipeline,
//                    attempts); group != G, none is. core/common/RunGroup.h.
//   step:S           the run is of pipeline step S (a for_each instance
//                    "eval[ds=a]" is of step eval); = != ~ too.
//   has:NAME         the run has a param or a metric NAME.
//   WORD, "TEXT"     a bare word or quoted text alone: the name contains it
//                    (case-insensitive).
// Combining: `and` (also implied between two terms), `or`, `not`,
// parentheses; keywords in any case; `not` binds tightest, then `and`, then
// `or`. Values run up to a space or a parenthesis; quote them ('...' or
// "...", \" and \\ inside) when they hold spaces or parentheses. The empty
// query matches every run.
//
// Errors name the 1-based column (in UTF-16 code units) of the problem, e.g.
//   "column 4: expected a value after '<'"
//   "column 1: missing ')' for the '(' at column 1"
//   "column 7: unknown state 'runing' (queued, held, ...)".
//
// A parsed query is immutable and cheap to copy; matches() may be called from
// any thread.
class RunQuery {
public:
    struct Node;

    // The empty query: matches every run.
    RunQuery();

    static Result<RunQuery> parse(QStringView text);

    bool matches(const RunQueryInput& in) const;
    // Convenience for a run alone (no params, no metrics).
    bool matches(const RunRecord& run) const { return matches(RunQueryInput{&run}); }

    bool isEmpty() const { return !m_root; }
    QString text() const { return m_text; }
    // Whether the query names queue, user or project (needs RunSpecLabels).
    bool usesSpecLabels() const { return m_usesLabels; }
    // The parsed tree as an s-expression, e.g. "(and (param lr < 0.001) (tag = baseline))";
    // for tests and diagnostics.
    QString dump() const;

private:
    std::shared_ptr<const Node> m_root;
    QString m_text;
    bool m_usesLabels = false;
};

// What the runs table can be grouped by.
struct RunGroupBy {
    enum class Kind { None, Param, Tag, State, Node, Queue, User, Project, Group };
    Kind kind = Kind::None;
    QString param; // Kind::Param only

    // A stable text form for settings: "none", "param:lr", "tag", "state",
    // "node", "queue", "user", "project", "group". fromId() of anything
    // else: nullopt.
    QString id() const;
    static std::optional<RunGroupBy> fromId(QStringView id);
    bool operator==(const RunGroupBy&) const = default;
};

// The group of one run. Runs fall in the same group when compareGroupKeys()
// gives 0; groups are ordered by it.
struct RunGroupKey {
    QString label;                // shown: "0.001", "running", "baseline, sweep", "no lr"
    std::optional<double> number; // param values that are numbers; the state's order
    bool missing = false;         // no such param / no tags / empty field: sorted last
};

// Param: the param's value (a number when it is one). Tag: the run's tags,
// sorted and joined with ", " (a run with two tags is in the group of that
// pair). State: in lifecycle order. Node, queue, user, project: the text
// (the empty queue is "default"). Group: the run group the run belongs to
// (RunRecord::groups), the widest when it is in several: a pipeline's runs
// ("pipeline N digits" from the runs' "<pipeline>/<step>" names), a sweep's
// ("sweep N digits-mlp", the name before its "[lr=...]"), a run's attempts
// ("attempts N <name>"), a gang's ranks ("gang N <name>"), each ordered by
// its group id; a run of none is "no group".
RunGroupKey runGroupKey(const RunGroupBy& by, const RunQueryInput& in);
// <0, 0, >0. Present before missing; numbers before text, in numeric order;
// text case-insensitively.
int compareGroupKeys(const RunGroupKey& a, const RunGroupKey& b);

// `text` as a number when the whole of it (spaces around aside) is one in any
// float form ("1e-3", ".5", "+2", "-3.", "inf", "nan"); else nullopt.
std::optional<double> parseQueryNumber(QStringView text);

} // namespace ty
