#pragma once

#include "core/common/Run.h"

#include <QColor>
#include <QIcon>

namespace ty {

// The colour of a run everywhere in the GUI (runs table, compare charts,
// legends, the table's column headers): a function of the run id only, so it
// is stable across sessions, views and processes. Run i gets entry
// (i - 1) mod 64 of colorcet's glasbey_category10 (Peter Kovesi, colorcet,
// after Glasbey, van der Heijden, Toh & Gray, "Colour displays for
// categorical images", Color Res. Appl. 32(4), 2007): the 10 colours of
// matplotlib/d3 category10, then each next colour the farthest (CAM02-UCS)
// from all before it. The first 40 are >= 13 CIELAB dE76 apart, neighbours
// >= 30 (TestRunColour); Tableau 10 repeated from the 11th run (and looked
// alike from the 7th). A run id <= 0 is grey.
// Thread: runColour() any; runColourIcon() GUI thread (pixmaps).
QColor runColour(RunId run);
// A small square swatch of runColour(run) (decoration for table cells, legends).
QIcon runColourIcon(RunId run);

} // namespace ty
