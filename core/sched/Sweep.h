#pragma once

#include <QList>
#include <QMap>
#include <QString>
#include <QVariant>

namespace ty::sched {

// Expands a job spec's `sweep:` block into one parameter set per combination
// (the Cartesian product), each being `base` overlaid with one value per
// swept key.
//
// Order (deterministic): keys in QMap order (sorted by name), the LAST key
// varying fastest, values in the order given -- like nested for-loops over the
// sorted keys. {batch: [32, 64], lr: [1e-3, 1e-4]} gives
//   {batch 32, lr 1e-3}, {batch 32, lr 1e-4}, {batch 64, lr 1e-3}, {batch 64, lr 1e-4}.
// An empty sweep gives [base]; a key with an empty value list gives no
// combinations at all (the product with an empty set).
//
// The runs of one sweep share a PendingRun::sweepId; PendingRun::sweepMaxConcurrent
// caps how many of them the scheduler runs at once.
QList<QVariantMap> expandSweep(const QVariantMap& base, const QMap<QString, QVariantList>& sweep);

// "batch=32,lr=0.001": the swept keys of one combination, in key order, for run
// names; doubles in their shortest round-trip form.
QString sweepLabel(const QVariantMap& params, const QMap<QString, QVariantList>& sweep);

} // namespace ty::sched
