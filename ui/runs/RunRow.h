#pragma once

#include "core/common/Run.h"
#include "core/store/RunNotice.h"

#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>

namespace ty {

// One row of the runs table: an immutable snapshot of a run as stored, with
// the latest point of each of its metric keys (ResultStore::latestMetrics)
// its params (ResultStore::params; the runs filter reads them) and its
// notices (ResultStore::notices; the run header marks them).
// Built on a reader thread (StoreReader) and handed to RunsModel by value.
struct RunRow {
    RunRecord run;
    QMap<QString, MetricPoint> latest;
    QMap<QString, QString> params;
    QList<RunNotice> notices; // oldest first
};

using RunRows = QList<RunRow>;

} // namespace ty

Q_DECLARE_METATYPE(ty::RunRow)
