#include "NodesLog.h"

Q_LOGGING_CATEGORY(lcNodes, "trainyard.nodes", QtWarningMsg)
