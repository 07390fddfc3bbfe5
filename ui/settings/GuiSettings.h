#pragma once

#include "ui/theme/Theme.h"

#include <QSettings>

namespace ty {

// The GUI's own settings, in QSettings("Trainyard", "trainyard") as every
// remembered view state (window layout, columns, saved queries):
//   settings/theme         "system" (default), "light" or "dark" (ui/theme)
//   settings/notifyRunEnd  true (default): a desktop notification when a run ends
// The scheduler policy is not here: it belongs to a database and is shared
// with trainyardctl and the service (`<db>.scheduler.json`, core/runs/QueuePolicy).
// Any thread (QSettings is reentrant); read at the moment of use, so a
// change in the Settings dialog takes effect at once.
QSettings guiSettings();

ThemeMode themeSetting();
void setThemeSetting(ThemeMode mode);

bool notifyRunEndSetting();
void setNotifyRunEndSetting(bool on);

} // namespace ty
