#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

int cmdArtifacts(Context& ctx, const QStringList& args);

} // namespace ty::cli
