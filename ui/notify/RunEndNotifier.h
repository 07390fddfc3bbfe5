#pragma once

#include "core/common/Run.h"

#include <QHash>
#include <QObject>
#include <QPointer>

class QSystemTrayIcon;
class QTimer;
class QWidget;

namespace ty {

// A desktop notification when a run ends (Settings > Notifications, on by
// default; notifyRunEndSetting() is read at each end, so switching it off
// silences the next one). The main window shows every run record it gets
// here (engine signals and database reads alike); a run seen unfinished
// and then finished (succeeded, failed, cancelled) is told once, whichever
// path brought the end first. Runs first seen already finished (the
// database as loaded at start) are not.
//
// Shown through QSystemTrayIcon::showMessage (a freedesktop notification
// where the desktop has a StatusNotifier tray), the icon shown for the
// message only; without a system tray the window asks for attention instead
// (QApplication::alert: the task bar entry is marked). GUI thread only.
class RunEndNotifier final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunEndNotifier)

public:
    explicit RunEndNotifier(QWidget* window);

    // A run's record as the window got it.
    void observe(const RunRecord& run);
    // A run deleted: forgotten.
    void forget(RunId run) { m_states.remove(run); }

    // The notification's words: "digits-mlp #12 succeeded" and what ended it.
    static QString titleFor(const RunRecord& run);
    static QString textFor(const RunRecord& run);

Q_SIGNALS:
    // A notification was shown (inTray) or, without a tray, the window
    // asked for attention.
    void notified(ty::RunId run, const QString& title, const QString& text, bool inTray);

private:
    void notify(const RunRecord& run);

    QWidget* m_window;
    QHash<RunId, RunState> m_states;
    QPointer<QSystemTrayIcon> m_tray;
    QTimer* m_hideTray = nullptr;
};

} // namespace ty
