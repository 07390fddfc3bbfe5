#pragma once

#include <QLoggingCategory>

// Log category of node connections and agents ("trainyard.nodes"); the local
// agent's stderr is logged here as warnings.
Q_DECLARE_LOGGING_CATEGORY(lcNodes)
