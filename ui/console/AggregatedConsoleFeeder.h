#pragma once

#include "core/logs/ConsoleMerge.h"

#include <QList>
#include <QObject>

#include <atomic>
#include <memory>

class QTimer;

namespace ty {

// The aggregated console's worker half: lives on AggregatedConsoleView's
// worker thread and owns a ConsoleMerge. open() reads every run's console
// copy to its end (in kReadChunk pieces, reporting progress), sends the whole
// merged stream in batches of kBatchLines (the first with reset = true), then
// polls the live runs' copies every kPollMs and sends the rows they commit.
// Rendering a 1M-line console therefore never runs on the GUI thread.
//
// Every open() carries a ticket; signals carry it back so the GUI ignores
// those of an older open(). Public methods run on the feeder's thread
// (queued through QMetaObject::invokeMethod), except requestAbort().
class AggregatedConsoleFeeder final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AggregatedConsoleFeeder)

public:
    static constexpr int kPollMs = 400;
    static constexpr qint64 kReadChunk = 4 << 20;
    static constexpr qsizetype kBatchLines = 100000;

    explicit AggregatedConsoleFeeder(QObject* parent = nullptr);
    ~AggregatedConsoleFeeder() override;

    // Starts over with `sources`; `live[i]`: source i may still grow (polled).
    void open(int ticket, const QList<ty::ConsoleMergeSource>& sources, const QList<bool>& live);
    // A run of the current set changed (started: path known; finished: read
    // its end and commit its last rows). Unknown runs are ignored.
    void updateSource(int ticket, const ty::ConsoleMergeSource& source, bool live);
    void stop();
    // Any thread: makes a long open() return early (the view is going away).
    void requestAbort() { m_abort.store(true); }

Q_SIGNALS:
    void linesReady(int ticket, bool reset, const QList<ty::MergedConsoleLine>& lines);
    // Initial load: `done` of `total` bytes read; `loading` false when finished.
    void progress(int ticket, qint64 done, qint64 total, bool loading);
    // Runs whose times are interpolated (no console.times), and read errors.
    void sourcesChecked(int ticket, const QList<qint64>& estimatedRuns, const QStringList& errors);

private:
    bool readAll(int index, qint64& done, qint64 total);
    void poll();
    void emitLines(bool reset);
    void check();

    std::unique_ptr<ConsoleMerge> m_merge;
    QList<bool> m_live;
    QTimer* m_pollTimer = nullptr;
    int m_ticket = 0;
    QStringList m_errors;
    std::atomic<bool> m_abort{false};
};

} // namespace ty
