#pragma once

#include "core/common/Run.h"

#include <QLabel>
#include <QList>

namespace ty {

// The attempts of a retried run (issue #25: its attempts group,
// core/retry/RetryRunner.h), one line under the run's header:
//   "Attempt 2 of 3:  1 failed (exit code) on local, 1m 12s  ·  2 running on
//    local, 40s  ·  3 queued, not before 10:42:30"
// each attempt's number a link that selects its run (attemptActivated).
// Hidden for a run that has no other attempt. GUI thread.
class AttemptsStrip : public QLabel {
    Q_OBJECT

public:
    explicit AttemptsStrip(QWidget* parent = nullptr);

    // `attempts`: the runs of the attempts group, in attempt order (their
    // RunGroupMembership position); `current`: the run shown. Fewer than
    // two: hidden. `nowUtc` measures a running attempt's duration.
    void setAttempts(const QList<RunRecord>& attempts, RunId current, const QDateTime& nowUtc);
    // What it shows, as plain text (tests, accessibility).
    QString plainText() const { return m_plain; }

Q_SIGNALS:
    void attemptActivated(ty::RunId run);

private:
    QString m_plain;
};

} // namespace ty
