#pragma once

// "Why did this step run?" (issue #24): the components of a memoization key
// that differ between the newest stored entry of the same step and the step
// as it is now. Pure; any thread.
//
// Reasons, in this order, each one line of English (core keeps English; a GUI
// may show them as they are):
//   "no earlier entry for step S"                 (no entry at all; alone)
//   "command changed: OLD -> NEW"                 (the command line, else the
//                                                   argv shell-quoted and joined)
//   "env NAME added" / "env NAME removed" / "env NAME OLD -> NEW"
//   "param NAME added" / "param NAME removed" / "param NAME OLD -> NEW"
//   "param NAME now ignored" / "param NAME no longer ignored" (and env alike)
//   "GPU type OLD -> NEW" / "GPU count OLD -> NEW"  ("none" for an empty type)
//   "PATH changed" / "PATH added" / "PATH removed"  (files of the code tree)
//   "PATH made executable" / "PATH no longer executable"
//   "PATH is a link now" / "PATH is no longer a link"
//   "and N more code files changed"               (after kMaxCodeReasons of them)
//   "input PATH changed" / "input PATH added" / "input PATH removed"
//   "upstream STEP changed" / "upstream STEP added" / "upstream STEP removed"
//   "key_extra changed"
// Values are quoted with shellQuote() where they would otherwise be ambiguous
// (empty, spaces). Reasons that come from the lookup itself (expired,
// outputs missing or changed, always_run) are MemoLookup's (MemoLookup.h).

#include "MemoKey.h"

#include <QStringList>

#include <optional>

namespace ty {

inline constexpr int kMaxCodeReasons = 20;

// `newest`: the components of the newest entry for the same (pipeline, step),
// nullopt when there is none. Empty when nothing in the key differs (then
// the miss, if any, is the lookup's).
QStringList explainMiss(const std::optional<MemoComponents>& newest, const MemoComponents& now);

} // namespace ty
