#include "MemoLog.h"

Q_LOGGING_CATEGORY(lcMemo, "trainyard.memo", QtWarningMsg)
