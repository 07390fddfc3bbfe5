#pragma once

#include <QString>

class QWidget;

namespace ty {

// Remembers a dialog's size and place: restored when it is first shown (if
// saved before), saved whenever it is hidden or closed, under
// "dialogs/<key>/geometry" in guiSettings(). Each kind of dialog has its own
// key ("submit", "artifacts", "passphrase", "settings", ...). Call once, in
// the dialog's constructor; the helper is a child of `window`.
void rememberGeometry(QWidget* window, const QString& key);
// The QSettings key rememberGeometry() uses for `key`.
QString geometrySettingsKey(const QString& key);

} // namespace ty
