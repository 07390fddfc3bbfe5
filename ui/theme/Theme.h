#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

class QApplication;

namespace ty {

// The GUI's colour theme (Settings > Theme, QSettings "settings/theme"):
//  - System: the platform's style and palette, as Qt gives them (a dark
//    desktop gives a dark palette where the platform theme provides one).
//    Whether that palette is dark is judged by systemPrefersDark().
//  - Light: the Fusion style with its standard (light) palette.
//  - Dark: the Fusion style with darkPalette().
enum class ThemeMode { System, Light, Dark };

// "system", "light", "dark"; anything else reads as System.
QString themeModeName(ThemeMode mode);
ThemeMode themeModeFromName(const QString& name);

// WCAG 2.x relative luminance (sRGB, 0 for black .. 1 for white) and the
// contrast ratio of two colours, (L1 + 0.05) / (L2 + 0.05) with L1 the
// lighter: 1 (same) .. 21 (black on white). 4.5 is WCAG AA for body text.
double relativeLuminance(const QColor& colour);
double contrastRatio(const QColor& a, const QColor& b);
// `colour` moved towards white (on a dark background) or black (on a light
// one), keeping its hue, by the least amount that gives at least `minRatio`
// against `background`; unchanged when it has that already.
QColor readableOn(const QColor& colour, const QColor& background, double minRatio = 4.5);

// A palette is dark when its window colour is darker than its text colour
// and below mid lightness (Qt 6.4 has no QStyleHints::colorScheme()).
bool isDarkPalette(const QPalette& palette);
// The dark Fusion palette of ThemeMode::Dark (window #2b2b2b, base #1f1f1f,
// text #e6e6e6; disabled text dimmed; links and highlight readable on it).
QPalette darkPalette();

// Whether the platform asks for dark colours: QStyleHints::colorScheme()
// from Qt 6.5, else isDarkPalette() of the platform's palette as it was
// before the first applyTheme().
bool systemPrefersDark();
// The theme now in force, System resolved: true when the GUI is dark.
bool themeIsDark();

// Applies `mode` to the application: style and palette. The platform's own
// style and palette are remembered on the first call, so that going back to
// System restores them. GUI thread; QApplication must exist.
void applyTheme(ThemeMode mode);
ThemeMode currentTheme();

} // namespace ty
