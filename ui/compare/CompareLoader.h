#pragma once

#include "CompareData.h"

#include <QObject>

#include <memory>
#include <vector>

namespace ty {

class MetricColumnReader;
class ResultStore;

// Loads what the compare view shows (runs, params, every metric point as
// columns, last/best summaries) off the GUI thread. Same pattern as
// StoreReader: it lives on a worker thread (MainWindow puts it on the store
// reader's thread), request() posts the work there, loaded() answers with an
// immutable snapshot, received queued on the GUI thread. The GUI thread never
// runs SQL for metrics.
//
// Metric points: read straight into the columns through the store's
// MetricColumnReader (ResultStore::openColumnReader(); for SQLite its own
// read-only connection, one snapshot per load, no MetricPoint per point):
// 10^7 points in about a second on the 2-core dev VM instead of about 10 s
// through ResultStore::metrics() (tests/bench/bench_compare, RESULTS.md
// "Compare view"). A store that offers no reader (a read-only SQLite store),
// or whose reader cannot be opened, goes through ResultStore::metrics(); both
// give the same points in the same order.
//
// Parallel: the runs are split over up to QThread::idealThreadCount() (at
// most 4) readers, each with its own connection and snapshot, run with
// QtConcurrent; the store itself (run records, params) is read on the
// loader's thread only. A run still being written to may so be read at a
// slightly different moment than another run (never half a commit).
class CompareLoader final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CompareLoader)

public:
    enum class ReadPath {
        Auto,           // columns when the store offers a column reader (SQLite, not read-only), else ResultStore
        ResultStore,    // always ResultStore::metrics() (benchmark baseline)
        ColumnsByIndex, // columns, but each key on its own (MetricColumnReader::Plan::KeyByKey; benchmark baseline)
    };

    // `store` must outlive the loader.
    explicit CompareLoader(ResultStore* store, QObject* parent = nullptr);
    ~CompareLoader() override;

    // Set before the first load (benchmarks, tests).
    void setReadPath(ReadPath path) { m_path = path; }
    ReadPath readPath() const { return m_path; }

    // Thread-safe: load `runs` (unknown ids are skipped), answered with
    // `ticket` so the receiver can drop answers to older requests.
    void request(const QList<RunId>& runs, int ticket);
    // The load itself, on the calling thread (tests, benchmarks). Not
    // concurrently with a requested load (the column reader's connection is
    // used by one thread at a time).
    CompareDataPtr load(const QList<RunId>& runs) const;
    // Whether the last load read the columns directly (diagnostics, tests).
    bool lastLoadUsedColumns() const { return m_lastUsedColumns; }

Q_SIGNALS:
    void loaded(int ticket, const ty::CompareDataPtr& data);

private:
    void loadMetricsViaStore(CompareRun& r) const;
    bool loadMetricsViaColumns(MetricColumnReader& reader, CompareRun& r) const;

    ResultStore* m_store;
    ReadPath m_path = ReadPath::Auto;
    // One reader per parallel part, opened on first use.
    mutable std::vector<std::unique_ptr<MetricColumnReader>> m_columns;
    mutable bool m_columnsFailed = false; // opening a reader failed (warned once)
    mutable bool m_columnsNone = false;   // the store offers none
    mutable bool m_lastUsedColumns = false;
};

} // namespace ty
