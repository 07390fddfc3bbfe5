#include "SettingsDialog.h"

#include "DialogGeometry.h"
#include "GuiSettings.h"
#include "core/runs/QueuePolicy.h"
#include "ui/theme/Theme.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

namespace ty {

namespace {
constexpr double kHourMs = 3600.0 * 1000.0;
constexpr double kDayMs = 24.0 * kHourMs;

bool differs(double a, double b)
{
    return std::abs(a - b) > 1e-9;
}
} // namespace

SettingsDialog::SettingsDialog(QString databasePath, bool schedulingWritable, QWidget* parent)
    : QDialog(parent)
    , m_databasePath(std::move(databasePath))
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings"));

    auto* appearance = new QGroupBox(tr("Appearance"), this);
    auto* appearanceForm = new QFormLayout(appearance);
    m_theme = new QComboBox(appearance);
    m_theme->setObjectName(QStringLiteral("themeCombo"));
    m_theme->setAccessibleName(tr("Theme"));
    m_theme->addItem(
            systemPrefersDark() ? tr("System (dark)") : tr("System (light)"), themeModeName(ThemeMode::System));
    m_theme->addItem(tr("Light"), themeModeName(ThemeMode::Light));
    m_theme->addItem(tr("Dark"), themeModeName(ThemeMode::Dark));
    m_theme->setCurrentIndex(std::max(0, m_theme->findData(themeModeName(themeSetting()))));
    m_theme->setToolTip(tr("System follows the desktop's colours; Light and Dark use Qt's Fusion style"));
    appearanceForm->addRow(tr("&Theme:"), m_theme);

    auto* notifications = new QGroupBox(tr("Notifications"), this);
    auto* notificationsLayout = new QVBoxLayout(notifications);
    m_notify = new QCheckBox(tr("&Notify me when a run ends"), notifications);
    m_notify->setObjectName(QStringLiteral("notifyRunEndCheck"));
    m_notify->setAccessibleName(tr("Notify me when a run ends"));
    m_notify->setToolTip(tr("A desktop notification when a run succeeds, fails or is cancelled"));
    m_notify->setChecked(notifyRunEndSetting());
    notificationsLayout->addWidget(m_notify);

    m_scheduling = new QGroupBox(tr("Scheduling of this database"), this);
    m_scheduling->setObjectName(QStringLiteral("schedulingGroup"));
    m_scheduling->setToolTip(tr("Kept in %1, shared with trainyardctl policy and the Queue view; "
                                "per-queue policies and fair-share shares in that file are kept")
                                     .arg(queuePolicyPath(m_databasePath)));
    auto* form = new QFormLayout(m_scheduling);
    m_preset = new QComboBox(m_scheduling);
    m_preset->setObjectName(QStringLiteral("policyPresetCombo"));
    m_preset->setAccessibleName(tr("Queue policy"));
    m_preset->addItems(queuePolicyNames());
    m_preset->setToolTip(tr("fcfs: strict submission order · priority: higher first, with aging · "
                            "sjf: shortest estimated runtime first\nbackfill: EASY backfill over priority · "
                            "fair-share: Slurm's classic fair-share factor, with backfill"));
    form->addRow(tr("&Policy:"), m_preset);
    m_aging = new QDoubleSpinBox(m_scheduling);
    m_aging->setObjectName(QStringLiteral("agingSpin"));
    m_aging->setAccessibleName(tr("Priority aging per hour"));
    m_aging->setRange(0.0, 1000.0);
    m_aging->setDecimals(2);
    m_aging->setSuffix(tr(" points/hour"));
    m_aging->setToolTip(tr("Priority points a waiting run gains per hour (priority and backfill policies)"));
    form->addRow(tr("Priority &aging:"), m_aging);
    m_runtime = new QDoubleSpinBox(m_scheduling);
    m_runtime->setObjectName(QStringLiteral("defaultRuntimeSpin"));
    m_runtime->setAccessibleName(tr("Assumed runtime"));
    m_runtime->setRange(0.01, 10000.0);
    m_runtime->setDecimals(2);
    m_runtime->setSuffix(tr(" h"));
    m_runtime->setToolTip(tr("The runtime assumed for a run with neither an estimate nor a time limit "
                             "(shortest-job-first order and backfill reservations)"));
    form->addRow(tr("Assumed &runtime:"), m_runtime);
    m_fairShareBy = new QComboBox(m_scheduling);
    m_fairShareBy->setObjectName(QStringLiteral("fairShareByCombo"));
    m_fairShareBy->setAccessibleName(tr("Fair share accounts"));
    m_fairShareBy->addItem(tr("user"), QStringLiteral("user"));
    m_fairShareBy->addItem(tr("project"), QStringLiteral("project"));
    form->addRow(tr("Fair share &by:"), m_fairShareBy);
    m_halfLife = new QDoubleSpinBox(m_scheduling);
    m_halfLife->setObjectName(QStringLiteral("halfLifeSpin"));
    m_halfLife->setAccessibleName(tr("Usage half-life"));
    m_halfLife->setRange(0.01, 3650.0);
    m_halfLife->setDecimals(2);
    m_halfLife->setSuffix(tr(" days"));
    m_halfLife->setToolTip(tr("How fast past GPU usage is forgotten in the fair-share factor"));
    form->addRow(tr("Usage &half-life:"), m_halfLife);
    m_scheduling->setEnabled(schedulingWritable);

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("settingsError"));
    m_error->setWordWrap(true);
    m_error->setVisible(false);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::Apply, this);
    m_buttons->setObjectName(QStringLiteral("settingsButtons"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        if (apply())
            accept();
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_buttons->button(QDialogButtonBox::Apply), &QPushButton::clicked, this, [this] { apply(); });

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(appearance);
    layout->addWidget(notifications);
    layout->addWidget(m_scheduling);
    layout->addWidget(m_error);
    layout->addStretch(1);
    layout->addWidget(m_buttons);

    loadScheduling();
    rememberGeometry(this, QStringLiteral("settings"));
}

void SettingsDialog::loadScheduling()
{
    const auto all = loadQueuePolicies(m_databasePath);
    const sched::Policy p = all ? all->defaults : defaultQueuePolicy();
    if (!all) {
        m_error->setText(all.error().message);
        m_error->setVisible(true);
        m_scheduling->setEnabled(false);
    }
    m_loadedPreset = queuePolicyName(p);
    if (m_preset->findText(m_loadedPreset) < 0)
        m_preset->addItem(m_loadedPreset); // a combination no preset names ("fcfs+backfill" set by hand)
    m_preset->setCurrentIndex(m_preset->findText(m_loadedPreset));
    m_loadedAging = p.agingPerHour;
    m_aging->setValue(p.agingPerHour);
    m_loadedRuntime = double(p.defaultRuntimeMs) / kHourMs;
    m_runtime->setValue(m_loadedRuntime);
    m_loadedRuntime = m_runtime->value(); // as shown (rounded to the spin box's decimals)
    m_loadedFairShareBy = p.fairShareBy == sched::FairShareBy::Project ? 1 : 0;
    m_fairShareBy->setCurrentIndex(m_loadedFairShareBy);
    m_loadedHalfLife = double(p.usageHalfLifeMs) / kDayMs;
    m_halfLife->setValue(m_loadedHalfLife);
    m_loadedHalfLife = m_halfLife->value();
}

Result<void> SettingsDialog::apply()
{
    m_error->setVisible(false);
    const bool schedulingChanged = m_scheduling->isEnabled()
            && (m_preset->currentText() != m_loadedPreset || differs(m_aging->value(), m_loadedAging)
                    || differs(m_runtime->value(), m_loadedRuntime)
                    || m_fairShareBy->currentIndex() != m_loadedFairShareBy
                    || differs(m_halfLife->value(), m_loadedHalfLife));
    if (schedulingChanged) {
        auto all = loadQueuePolicies(m_databasePath);
        Result<sched::Policy> chosen
                = all ? Result<sched::Policy>(all->defaults) : Result<sched::Policy>(std::unexpected(all.error()));
        if (chosen && m_preset->currentText() != m_loadedPreset)
            chosen = queuePolicyNamed(m_preset->currentText(), *chosen);
        if (chosen) {
            sched::Policy& p = *chosen;
            p.agingPerHour = m_aging->value();
            if (differs(m_runtime->value(), m_loadedRuntime))
                p.defaultRuntimeMs = qint64(std::llround(m_runtime->value() * kHourMs));
            p.fairShareBy = m_fairShareBy->currentIndex() == 1 ? sched::FairShareBy::Project : sched::FairShareBy::User;
            if (differs(m_halfLife->value(), m_loadedHalfLife))
                p.usageHalfLifeMs = qint64(std::llround(m_halfLife->value() * kDayMs));
            all->defaults = p;
        }
        Result<void> saved
                = chosen ? saveQueuePolicies(m_databasePath, *all) : Result<void>(std::unexpected(chosen.error()));
        if (!saved) {
            m_error->setText(tr("The scheduling settings were not saved: %1").arg(saved.error().message));
            m_error->setVisible(true);
            return saved;
        }
        loadScheduling();
    }
    const auto theme = themeModeFromName(m_theme->currentData().toString());
    setThemeSetting(theme);
    applyTheme(theme);
    setNotifyRunEndSetting(m_notify->isChecked());
    Q_EMIT applied();
    return {};
}

} // namespace ty
