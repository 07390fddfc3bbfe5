#pragma once

#include "core/common/Result.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;

namespace ty {

// Settings… (Tools menu): what otherwise lives only in files.
//  - Appearance: theme, System / Light / Dark (ui/theme; guiSettings()).
//  - Notifications: a desktop notification when a run ends (RunEndNotifier).
//  - Scheduling of this database: the queue policy (the presets of
//    queuePolicyNames()), priority aging, the runtime assumed for a run
//    without estimate or limit, fair-share accounts and usage half-life.
//    Read from and written to `<db>.scheduler.json` with core's QueuePolicy
//    code, as the Queue view's selector and `trainyardctl policy` do: the
//    file's shares and per-queue policies are kept, and the service follows
//    the file before its next pass. Disabled for a read-only database.
//
// OK and Apply write what changed (the policy file only when a scheduling
// value changed) and apply it at once; an error (an unreadable policy file)
// is shown in the dialog ("settingsError") and nothing is written.
// objectNames for tests: "settingsDialog", "themeCombo", "notifyRunEndCheck",
// "policyPresetCombo", "agingSpin", "defaultRuntimeSpin", "fairShareByCombo",
// "halfLifeSpin", "schedulingGroup", "settingsButtons". GUI thread only.
class SettingsDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SettingsDialog)

public:
    SettingsDialog(QString databasePath, bool schedulingWritable, QWidget* parent = nullptr);

    // Writes and applies what changed (Apply; OK then closes).
    Result<void> apply();

Q_SIGNALS:
    // After apply() wrote something: the main window re-reads the policy.
    void applied();

private:
    void loadScheduling();

    QString m_databasePath;
    QComboBox* m_theme = nullptr;
    QCheckBox* m_notify = nullptr;
    QGroupBox* m_scheduling = nullptr;
    QComboBox* m_preset = nullptr;
    QDoubleSpinBox* m_aging = nullptr;
    QDoubleSpinBox* m_runtime = nullptr;
    QComboBox* m_fairShareBy = nullptr;
    QDoubleSpinBox* m_halfLife = nullptr;
    QLabel* m_error = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    // The values as read, to write the policy file only when one changed.
    QString m_loadedPreset;
    double m_loadedAging = 0;
    double m_loadedRuntime = 0;
    int m_loadedFairShareBy = 0;
    double m_loadedHalfLife = 0;
};

} // namespace ty
