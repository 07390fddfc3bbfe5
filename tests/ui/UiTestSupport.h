#pragma once

// Helpers of the widget tests (header only: trainyard_testsupport links no
// Qt Widgets).

#include <QDir>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <QTest>
#include <QTreeWidgetItem>
#include <QWidget>

namespace ty::test {

// The GUI's QSettings (native and INI, user scope) go to `dir`, never to the
// user's own configuration.
inline void keepSettingsIn(const QString& dir)
{
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir);
}

// TRAINYARD_TEST_SCREENSHOTS=folder: what the test looked at, as
// folder/NAME.png, for a person; nothing without it. A failed save fails the
// calling test function.
inline void saveScreenshot(QWidget& window, const QString& name)
{
    const QString dir = qEnvironmentVariable("TRAINYARD_TEST_SCREENSHOTS");
    if (!dir.isEmpty())
        QVERIFY(window.grab().save(QDir(dir).filePath(name + QStringLiteral(".png"))));
}

// The texts of `item`'s first `columns` columns (a view's ColumnCount),
// empty cells included.
inline QStringList rowTexts(const QTreeWidgetItem* item, int columns)
{
    QStringList out;
    for (int c = 0; c < columns; ++c)
        out << item->text(c);
    return out;
}

} // namespace ty::test
