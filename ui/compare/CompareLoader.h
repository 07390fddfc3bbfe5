#pragma once

#include "CompareData.h"

#include <QObject>

namespace ty {

class ResultStore;

// Loads what the compare view shows (runs, params, every metric point as
// columns, last/best summaries) off the GUI thread. Same pattern as
// StoreReader: it lives on a worker thread (MainWindow puts it on the store
// reader's thread), request() posts the work there, loaded() answers with an
// immutable snapshot, received queued on the GUI thread. The GUI thread never
// runs SQL for metrics.
class CompareLoader final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CompareLoader)

public:
    // `store` must outlive the loader.
    explicit CompareLoader(ResultStore* store, QObject* parent = nullptr);

    // Thread-safe: load `runs` (unknown ids are skipped), answered with
    // `ticket` so the receiver can drop answers to older requests.
    void request(const QList<RunId>& runs, int ticket);
    // The load itself, on the calling thread (tests, benchmarks).
    CompareDataPtr load(const QList<RunId>& runs) const;

Q_SIGNALS:
    void loaded(int ticket, const ty::CompareDataPtr& data);

private:
    ResultStore* m_store;
};

} // namespace ty
