#pragma once

#include <QLoggingCategory>

// Log category of memoization ("trainyard.memo"): the hash cache, entries
// that cannot be read back.
Q_DECLARE_LOGGING_CATEGORY(lcMemo)
