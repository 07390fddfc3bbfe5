#pragma once

#include "CliCommon.h"

#include <QStringList>

namespace ty::cli {

// trainyardctl import RUN FILE...: metrics a framework wrote to files
// (Lightning's metrics.csv, TensorBoard event files, Hugging Face
// trainer_state.json, JSON lines; core/logs/importers) into a run, and
// TensorBoard hparams into its params. Each file is said with its point and
// metric counts. Returns the exit code (Cli.h): 0; 2 usage; 3 a file that is
// not a metric file; 4 no such run; 1 a file damaged part-way (the points
// before it are kept); 5 the database could not be written.
int cmdImport(Context& ctx, const QStringList& args);

} // namespace ty::cli
