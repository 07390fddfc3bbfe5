#pragma once

#include <QDialog>
#include <QKeySequence>
#include <QList>
#include <QString>

class QMessageBox;
class QWidget;

namespace ty {

// One keyboard shortcut as Help > Keyboard shortcuts lists it.
struct ShortcutEntry {
    QString what; // the action's text without '&' and '…', or a QShortcut's whatsThis
    QString keys; // QKeySequence::NativeText, several joined by ", "
};

// Every shortcut reachable in `window`: its QActions that have one (text
// from the action) and its QShortcuts with a whatsThis, sorted by `what`,
// each once. Built from the widgets, so the list cannot drift from them.
QList<ShortcutEntry> collectShortcuts(const QWidget* window);

// Help > Keyboard shortcuts: a table of collectShortcuts(window).
// objectName "shortcutsDialog", its table "shortcutsTable". Not modal.
QDialog* openShortcutsDialog(QWidget* window);

// Help > About: name, version (QCoreApplication::applicationVersion), what it
// is, its licence and the Qt version. objectName "aboutBox". Not modal.
QMessageBox* openAboutBox(QWidget* parent);

} // namespace ty
