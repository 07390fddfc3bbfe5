#include "Theme.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleHints>

#include <cmath>

namespace ty {

namespace {

struct PlatformLook {
    bool remembered = false;
    QString style;
    QPalette palette;
    ThemeMode current = ThemeMode::System;
};

PlatformLook& platformLook()
{
    static PlatformLook look;
    return look;
}

void rememberPlatformLook()
{
    PlatformLook& look = platformLook();
    if (look.remembered)
        return;
    look.remembered = true;
    look.style = QApplication::style() ? QApplication::style()->name() : QString();
    look.palette = QApplication::palette();
}

double channel(int value)
{
    const double c = value / 255.0;
    return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

QColor mix(const QColor& from, const QColor& to, double t)
{
    const auto at = [t](int a, int b) { return int(std::lround(a + (b - a) * t)); };
    return QColor(at(from.red(), to.red()), at(from.green(), to.green()), at(from.blue(), to.blue()));
}

} // namespace

QString themeModeName(ThemeMode mode)
{
    switch (mode) {
    case ThemeMode::System: return QStringLiteral("system");
    case ThemeMode::Light: return QStringLiteral("light");
    case ThemeMode::Dark: return QStringLiteral("dark");
    }
    return QStringLiteral("system");
}

ThemeMode themeModeFromName(const QString& name)
{
    if (name == u"light")
        return ThemeMode::Light;
    if (name == u"dark")
        return ThemeMode::Dark;
    return ThemeMode::System;
}

double relativeLuminance(const QColor& colour)
{
    const QColor c = colour.toRgb();
    return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue());
}

double contrastRatio(const QColor& a, const QColor& b)
{
    const double la = relativeLuminance(a);
    const double lb = relativeLuminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor readableOn(const QColor& colour, const QColor& background, double minRatio)
{
    const QColor c = colour.toRgb();
    if (contrastRatio(c, background) >= minRatio)
        return c;
    // Towards whichever end of the scale leaves more room on this background.
    const QColor end = contrastRatio(Qt::white, background) >= contrastRatio(Qt::black, background) ? QColor(Qt::white)
                                                                                                    : QColor(Qt::black);
    double lo = 0.0;
    double hi = 1.0;
    for (int i = 0; i < 24; ++i) { // the least t with enough contrast (monotonic in t)
        const double t = (lo + hi) / 2;
        if (contrastRatio(mix(c, end, t), background) >= minRatio)
            hi = t;
        else
            lo = t;
    }
    return mix(c, end, hi);
}

bool isDarkPalette(const QPalette& palette)
{
    const QColor window = palette.color(QPalette::Active, QPalette::Window);
    const QColor text = palette.color(QPalette::Active, QPalette::WindowText);
    return window.lightness() < 128 && window.lightness() < text.lightness();
}

QPalette darkPalette()
{
    const QColor window(0x2b, 0x2b, 0x2b);
    const QColor base(0x1f, 0x1f, 0x1f);
    const QColor text(0xe6, 0xe6, 0xe6);
    const QColor dimmed(0x80, 0x80, 0x80);
    QPalette p;
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x2a, 0x2a, 0x2a));
    p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3a, 0x3a));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Light, QColor(0x4a, 0x4a, 0x4a));
    p.setColor(QPalette::Midlight, QColor(0x3e, 0x3e, 0x3e));
    p.setColor(QPalette::Mid, QColor(0x30, 0x30, 0x30));
    p.setColor(QPalette::Dark, QColor(0x18, 0x18, 0x18));
    p.setColor(QPalette::Shadow, QColor(0x0c, 0x0c, 0x0c));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6c, 0xa8, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xb3, 0x94, 0xff));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, dimmed);
    p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x50, 0x50, 0x50));
    p.setColor(QPalette::Disabled, QPalette::HighlightedText, dimmed);
    return p;
}

bool systemPrefersDark()
{
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    const Qt::ColorScheme scheme = QGuiApplication::styleHints()->colorScheme();
    if (scheme != Qt::ColorScheme::Unknown)
        return scheme == Qt::ColorScheme::Dark;
#endif
    const PlatformLook& look = platformLook();
    return isDarkPalette(look.remembered ? look.palette : QGuiApplication::palette());
}

bool themeIsDark()
{
    return isDarkPalette(QGuiApplication::palette());
}

void applyTheme(ThemeMode mode)
{
    rememberPlatformLook();
    PlatformLook& look = platformLook();
    if (mode == look.current)
        return;
    look.current = mode;
    switch (mode) {
    case ThemeMode::System:
        if (QStyle* style = QStyleFactory::create(look.style))
            QApplication::setStyle(style);
        QApplication::setPalette(look.palette);
        break;
    case ThemeMode::Light:
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(QApplication::style()->standardPalette());
        break;
    case ThemeMode::Dark:
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(darkPalette());
        break;
    }
}

ThemeMode currentTheme()
{
    return platformLook().current;
}

} // namespace ty
