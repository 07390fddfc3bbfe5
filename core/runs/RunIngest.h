#pragma once

#include "common/Result.h"
#include "common/Run.h"
#include "common/WriteBehind.h"
#include "logs/ConsoleLine.h"
#include "logs/MetricExtractor.h"
#include "logs/StderrRanges.h"

#include <QFile>
#include <QList>
#include <QString>

#include <memory>

namespace ty {

class FailureDetector;
class ResultStore;
class TerminalRenderer;

// The log pipeline of one run, on the ingestion owner:
//   console bytes at offsets -> local copy (raw, byte-identical to the node's
//   file) -> terminal rendering -> committed lines -> metric extraction and
//   failure detection -> result store.
//
// Offsets. The local copy's size is how far the console has been fetched; the
// run's stored consoleOffset is how far it has been *ingested*: every line
// that starts before it has been committed and its metrics stored. It always
// sits at the start of a line the terminal could still redraw, so resuming
// there (after a crash, or in the next session) re-creates the renderer's
// state from the local copy and stores each metric exactly once.
//
// Thread affinity: one thread at a time (the engine's).
class RunIngest final {
public:
    RunIngest(RunRecord run, ResultStore* store);
    ~RunIngest();
    RunIngest(const RunIngest&) = delete;
    RunIngest& operator=(const RunIngest&) = delete;

    // The spec's own metric rules; call before open().
    void setRules(QList<MetricRule> rules);

    // Opens (creates) the local console copy under `dir` and replays what was
    // fetched but not yet ingested. Returns the offset to resume fetching at.
    // Errors: the local copy cannot be created or read (path in the message).
    Result<qint64> open(const QString& dir);

    // The next console bytes, starting at `offset` of the node's file. Bytes
    // already held are skipped; a gap (offset past what is held) is an error
    // that names the run and both offsets. Returns the metric points stored.
    // `stderrRanges` (absolute offsets, from the agent): the bytes that came
    // from the run's stderr; those not held yet are appended to the copy's
    // sidecar (<dir>/console.stderr, StderrRanges.h) before the bytes.
    Result<QList<MetricPoint>> ingest(qint64 offset, QByteArrayView bytes, const QList<ByteRange>& stderrRanges = {});

    // End of the console: commits the last lines. Returns the points stored.
    QList<MetricPoint> finish();

    // The failure reason found in the console so far ("CUDA out of memory",
    // the last line of a Python traceback, ...), empty if none.
    QString failureReason() const;

    const RunRecord& run() const { return m_run; }
    RunRecord& run() { return m_run; }
    qint64 fetchedOffset() const { return m_fetched; }
    qint64 ingestedOffset() const { return m_ingested; }

private:
    // A committed line, straight from the renderer (its LineSink): failure
    // detection and metric extraction. The line is the renderer's, refilled
    // for the next one.
    void takeLine(const ConsoleLine& line);
    QList<MetricPoint> processCommitted(bool final);

    RunRecord m_run;
    ResultStore* m_store;
    QFile m_copy;
    WriteBehind m_copyTrail{WriteBehind::Flush | WriteBehind::Drop}; // written and ingested at once: both
    QFile m_times; // <dir>/console.times: arrival time per ingest chunk (logs/ConsoleTimes.h)
    std::unique_ptr<TerminalRenderer> m_renderer;
    QList<MetricRule> m_rules;
    std::unique_ptr<MetricExtractor> m_extractor;
    std::unique_ptr<FailureDetector> m_failures;
    StderrSidecar m_stderr;
    QList<MetricPoint> m_points; // found since the last processCommitted()
    qint64 m_feedTimeMs = 0;     // wall time of the bytes being fed: the points' wallTimeMs
    qint64 m_rendererBase = 0; // stream offset where the renderer started
    qint64 m_fetched = 0;
    qint64 m_ingested = 0;
    qint64 m_suppressBefore = 0; // lines starting before this were ingested in an earlier session
};

} // namespace ty
