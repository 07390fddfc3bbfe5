#pragma once

#include "core/common/Result.h"

#include <QObject>
#include <QThread>

#include <memory>

namespace ty {

class MainWindow;
class ResultStore;
class RunEngine;

// Everything the `trainyard` executable wires together, in one place so
// tests can build the real thing: the result store, the RunEngine on its own
// worker thread with the local node (a trainyard-agent child process) and
// the ingestion lock, and the main window.
//
// Destruction order: window (stops its reader thread), engine (deleted on its
// thread, then the thread stops), store.
class Application final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Application)

public:
    // Opens the database at `databasePath` (created when missing) and starts
    // the engine with the local node served by `agentPath`. Errors: the store
    // could not be opened (message names the file).
    static Result<std::unique_ptr<Application>> create(const QString& databasePath, const QString& agentPath);
    ~Application() override;

    MainWindow* window() const { return m_window.get(); }
    ResultStore* store() const { return m_store.get(); }
    RunEngine* engine() const { return m_engine; }

    // Parses the job spec at `path` and submits it; a bad spec opens the
    // submit dialog showing it with its error instead.
    void submitSpecFile(const QString& path);
    // Opens files given on the command line (GuiCommandLine::files, a file
    // manager's %F) as a drop on the window (MainWindow::openPaths): a job
    // spec is shown in the submit dialog, scripts and folders open it
    // pre-filled; relative paths are taken from the current directory.
    void openFiles(const QStringList& paths);

private:
    Application() = default;

    std::unique_ptr<ResultStore> m_store;
    QThread m_engineThread;
    RunEngine* m_engine = nullptr;
    std::unique_ptr<MainWindow> m_window;
};

} // namespace ty
