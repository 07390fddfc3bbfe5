#pragma once

#include "core/common/Run.h"

#include <QDateTime>
#include <QMetaType>
#include <QString>

namespace ty {

// Something about a run that its user should see and may have to act on,
// recorded by whoever noticed it (the run engine: a synced symlink that leads
// nowhere on the node, artifacts that could not be listed or were refused on
// download, a console that cannot be followed). Shown beside the run in the
// GUI and by `trainyardctl show`; the log line stays for those who read logs.
// Notices are never changed once recorded; they go with their run.
struct RunNotice {
    RunId run = 0;
    QDateTime at; // UTC, ms; invalid = "now" when added
    QString text; // one short paragraph, plain text (no markup), naming what to do where it can

    bool operator==(const RunNotice&) const = default;
};

} // namespace ty

Q_DECLARE_METATYPE(ty::RunNotice)
