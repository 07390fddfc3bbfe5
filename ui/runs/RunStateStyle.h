#pragma once

#include "core/common/Run.h"

#include <QColor>
#include <QIcon>

namespace ty {

// How a run state looks everywhere in the GUI (table, console header, status
// bar): one colour per state and a round icon of that colour. GUI thread only
// (icons are pixmaps).
class RunStateStyle final {
public:
    static QColor color(RunState state);
    static QIcon icon(RunState state);
    // Order used when sorting by state: active runs first, then queued, then finished.
    static int sortOrder(RunState state);

private:
    RunStateStyle() = delete;
};

} // namespace ty
