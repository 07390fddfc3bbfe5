#pragma once

#include "common/Run.h"

#include <QColor>
#include <QIcon>

namespace ty {

// The colour of a run everywhere in the GUI (runs table, compare charts,
// legends, the table's column headers): a function of the run id only, so it
// is stable across sessions, views and processes. Consecutive ids (a sweep)
// get different colours from the Tableau 10 palette (Maureen Stone, Tableau
// Software, 2016), cycling every 10 runs; a run id <= 0 is grey.
// Thread: runColour() any; runColourIcon() GUI thread (pixmaps).
QColor runColour(RunId run);
// A small square swatch of runColour(run) (decoration for table cells, legends).
QIcon runColourIcon(RunId run);

} // namespace ty
