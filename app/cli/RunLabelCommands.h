#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QStringList>

#include <functional>

class QTextStream;

namespace ty {
class ResultStore;
}

namespace ty::cli {

// What a user says about runs besides running them (ResultStore::annotateRun):
//   rename RUN NAME
//   tag RUN [+TAG | -TAG | TAG]...     + or bare adds, - removes; none: lists them
//   note RUN [TEXT | -]                 sets the notes (- reads them from stdin);
//                                       no TEXT prints them; "" clears them
//   archive RUN... | unarchive RUN...   ls (and the GUI's table) leave archived runs out
// Returns the exit code (Cli.h): 0, 2 usage, 4 no such run, 5 the write failed.
// `find` resolves a RUN argument (an id or a name) as every command does.
// Output: a line per change on `out`; errors on `err`, names escaped.
// `annotate` makes the change (the service's `annotate` op: only the service
// writes the database); its error's kind picks the exit code (NotFound 4,
// InvalidInput 2, else 5). `store` is only read.
using RunFinder = std::function<Result<RunRecord>(const QString&)>;
using RunAnnotator = std::function<Result<void>(RunId, const RunAnnotation&)>;
int runLabelCommand(const QString& command, ResultStore& store, const RunFinder& find, const RunAnnotator& annotate,
        const QStringList& args, QTextStream& out, QTextStream& err);

} // namespace ty::cli
