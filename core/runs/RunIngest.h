#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/common/WriteBehind.h"
#include "core/logs/ConsoleLine.h"
#include "core/logs/ConsoleNodeOffsets.h"
#include "core/logs/MetricExtractor.h"
#include "core/logs/StderrRanges.h"

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
// Node offsets. The agent's `tail` and `output` count bytes of the node's
// file; everything stored counts bytes of the local copy. The two are equal
// unless the node's file was truncated while the run was followed
// (nodeConsoleTruncated()): the copy keeps what it had and the new content
// follows it, and ConsoleNodeOffsets (console.node beside the copy) records
// where. open(), ingest() and fetchedNodeOffset() convert at that border.
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
    // fetched but not yet ingested. Returns the offset of the node's file to
    // resume fetching at (the copy's size, unless the node's file was
    // truncated: see above).
    // Errors: the local copy or its console.node cannot be created or read
    // (path in the message).
    Result<qint64> open(const QString& dir);

    // The node's file was found truncated (AgentClient::consoleTruncated,
    // which gives `generation`): its new content, from node offset 0, is
    // appended after the bytes held now, and console.node says so before any
    // of it is. Errors: console.node
    // cannot be written (path in the message); this session still records
    // the new content after the bytes held, but a later one would resume at
    // the wrong node offset.
    Result<void> nodeConsoleTruncated(qint64 generation);

    // The next console bytes, starting at `nodeOffset` of the node's file
    // (its current content: see above). Bytes already held are skipped; a
    // gap (offset past what is held) is an error that names the run and both
    // offsets (local). Returns the metric points stored.
    // `nodeStderrRanges` (node offsets, from the agent): the bytes that came
    // from the run's stderr; those not held yet are appended to the copy's
    // sidecar (<dir>/console.stderr, StderrRanges.h, local offsets) before the bytes.
    Result<QList<MetricPoint>> ingest(
            qint64 nodeOffset, QByteArrayView bytes, const QList<ByteRange>& nodeStderrRanges = {});

    // Whether the last ingest() failed because the local copy could not be
    // written (a full disk: its message has the system's reason): nothing of
    // it is held, and the same bytes can be given again once writes succeed.
    bool writeFailed() const { return m_writeFailed; }

    // End of the console: commits the last lines. Returns the points stored.
    QList<MetricPoint> finish();

    // The failure reason found in the console so far ("CUDA out of memory",
    // the last line of a Python traceback, ...), empty if none.
    QString failureReason() const;
    // What found it (its kind and reason), null only before open().
    const FailureDetector* failureDetector() const { return m_failures.get(); }

    const RunRecord& run() const { return m_run; }
    RunRecord& run() { return m_run; }
    // Bytes held in the local copy (local offsets, as stored).
    qint64 fetchedOffset() const { return m_fetched; }
    // How far the node's current content has been fetched (node offsets).
    qint64 fetchedNodeOffset() const { return m_nodeOffsets.toNode(m_fetched); }
    // The local offset of node offset `nodeOffset` of the current content.
    qint64 localOffset(qint64 nodeOffset) const { return m_nodeOffsets.toLocal(nodeOffset); }
    // The truncation generation the current node content follows (for tail()).
    qint64 nodeGeneration() const { return m_nodeOffsets.generation(); }
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
    ConsoleNodeOffsets m_nodeOffsets;
    QList<MetricPoint> m_points; // found since the last processCommitted()
    qint64 m_feedTimeMs = 0;     // wall time of the bytes being fed: the points' wallTimeMs
    qint64 m_rendererBase = 0;   // stream offset where the renderer started
    qint64 m_fetched = 0;
    qint64 m_ingested = 0;
    bool m_writeFailed = false;
    qint64 m_suppressBefore = 0; // lines starting before this were ingested in an earlier session
};

} // namespace ty
