#pragma once

#include "core/common/Run.h"

#include <QDateTime>
#include <QMetaType>
#include <QString>

namespace ty {

// A file a run produced (checkpoint, plot, ...), as recorded in the result
// database. One record per (run, path): adding the same path again replaces it.
struct ArtifactRecord {
    RunId run = 0;
    QString path;        // on the run's node, or a local copy under runDataDir()
    qint64 size = 0;     // bytes
    QString sha256;      // lowercase hex, empty when not computed
    QDateTime createdAt; // UTC, ms; invalid = "now" when added
};

} // namespace ty

Q_DECLARE_METATYPE(ty::ArtifactRecord)
