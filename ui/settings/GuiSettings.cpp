#include "GuiSettings.h"

namespace ty {

namespace {
const QString kTheme = QStringLiteral("settings/theme");
const QString kNotifyRunEnd = QStringLiteral("settings/notifyRunEnd");
} // namespace

QSettings guiSettings()
{
    return QSettings(QStringLiteral("Trainyard"), QStringLiteral("trainyard"));
}

ThemeMode themeSetting()
{
    return themeModeFromName(guiSettings().value(kTheme).toString());
}

void setThemeSetting(ThemeMode mode)
{
    guiSettings().setValue(kTheme, themeModeName(mode));
}

bool notifyRunEndSetting()
{
    return guiSettings().value(kNotifyRunEnd, true).toBool();
}

void setNotifyRunEndSetting(bool on)
{
    guiSettings().setValue(kNotifyRunEnd, on);
}

} // namespace ty
