#include "ResultStore.h"

#include "SqliteResultStore.h"

namespace ty {

ResultStore::ResultStore(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<ty::RunId>("ty::RunId");
    qRegisterMetaType<QList<ty::RunId>>("QList<ty::RunId>");
    qRegisterMetaType<ty::RunRecord>();
    qRegisterMetaType<ty::MetricPoint>();
    qRegisterMetaType<ty::ArtifactRecord>();
    qRegisterMetaType<ty::RunNotice>();
}

Result<std::unique_ptr<ResultStore>> ResultStore::open(const QString& path, StoreAccess access)
{
    auto store = SqliteResultStore::open(path, {}, access);
    if (!store)
        return std::unexpected(store.error());
    return std::unique_ptr<ResultStore>(std::move(*store));
}

} // namespace ty
