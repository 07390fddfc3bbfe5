// Run states and failure kinds as the GUI shows them, translated (issue #28).
//
// Core names them in English for the database, the CLI, the filter language
// (`state:failed`) and the service protocol (core/common/Run.h,
// core/common/FailureKind.h); these are the same words through the GUI's
// translator (context "RunTexts" in translations/*.ts). Without a translator
// they equal runStateName() and failureKindLabel(), so English output is
// unchanged.
//
// Thread affinity: any thread once the QCoreApplication exists (QCoreApplication::translate).
#pragma once

#include "core/common/FailureKind.h"
#include "core/common/Run.h"

#include <QString>
#include <QStringList>

namespace ty {

// "queued", "held", "starting", "running", "succeeded", "failed", "cancelled", "unknown".
QString runStateText(RunState state);
// As failureKindLabel(): "exit code", "OOM killer", "CUDA OOM", ...; "" for None.
QString failureKindText(FailureKind kind);
// A run's state cell: "failed (CUDA OOM)" for a failure of a known kind, else the state.
QString runStateCellText(RunState state, FailureKind kind);
// Every text runStateCellText() can give, for sizing the column that shows it.
QStringList runStateCellTexts();

} // namespace ty
