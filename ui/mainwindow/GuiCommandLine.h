#pragma once

#include <QString>
#include <QStringList>

namespace ty {

// The `trainyard` command line, parsed before any QApplication exists, so
// `--version` and `--help` print and exit also without a display (a
// QApplication aborts there with a Qt platform error). Pure.
//
//   trainyard [--db PATH] [--submit FILE] [FILE...]
//
// FILEs (what a file manager passes through the .desktop file's %F) are
// opened as if dropped on the window: a job spec is shown in the submit
// dialog, scripts and folders open it pre-filled (MainWindow::openPaths).
struct GuiCommandLine {
    enum class Action {
        Run,          // start the GUI
        PrintAndExit, // `text` on stdout, exit 0 (--help, --version)
        Fail,         // `text` on stderr, exit 2 (unknown option, missing value)
    };
    Action action = Action::Run;
    QString text;
    QString databasePath; // --db; empty: the default
    QString submitFile;   // --submit
    QStringList files;    // positional, as given

    // `args` includes the program name; `version` is what --version prints.
    static GuiCommandLine parse(const QStringList& args, const QString& version, const QString& defaultDatabasePath);
};

} // namespace ty
