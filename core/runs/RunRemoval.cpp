#include "RunRemoval.h"

#include "core/common/Paths.h"
#include "core/store/ResultStore.h"

#include <QDir>

namespace ty {

Result<void> deleteEndedRun(ResultStore& store, const QString& databasePath, RunId id)
{
    const auto run = store.run(id);
    if (!run) {
        if (run.error().kind == ErrorKind::NotFound) // deleted already (another client's rm), or never there
            return fail(QStringLiteral("no run %1").arg(id), ErrorKind::NotFound);
        return std::unexpected(run.error());
    }
    if (!isTerminal(run->state))
        return fail(QStringLiteral("run %1 is %2: cancel it first").arg(id).arg(runStateName(run->state)),
                ErrorKind::InvalidInput);
    store.deleteRun(id);
    if (auto written = store.flush(); !written)
        return written;
    QDir folder(runDataDir(databasePath, id));
    if (folder.exists() && !folder.removeRecursively())
        return fail(QStringLiteral("run %1 was deleted, but its folder %2 could not be removed entirely")
                            .arg(id)
                            .arg(folder.path()));
    return {};
}

} // namespace ty
