#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl validate FILE...: parses job specs without a database or a
// service; each error with file:line:column. Returns 0, 2 usage, 3 invalid.
int cmdValidate(const QStringList& args);

} // namespace ty::cli
