#pragma once

#include "core/common/Result.h"

#include <QObject>

#include <memory>

namespace ty {

class MainWindow;
class ResultStore;

namespace service {
class ServiceRunControl;
}

// Everything the `trainyard` executable wires together, in one place so
// tests can build the real thing: the result store (read here), the
// connection to trainyardd (the engine: queue, nodes, ingestion; started when
// none serves the database), and the main window.
//
// Destruction order: window (stops its reader thread), the service
// connection (the service and its runs go on), store.
class Application final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Application)

public:
    // Opens the database at `databasePath` (created when missing) and
    // connects to its service, starting trainyardd when none runs (found by
    // serviceExecutablePath(); its nodes' agent by localAgentPath()). Errors:
    // the store could not be opened (message names the file). A service that
    // cannot be started is no error: the window shows the runs without an
    // engine and says why (serviceError()).
    static Result<std::unique_ptr<Application>> create(const QString& databasePath);
    ~Application() override;

    MainWindow* window() const { return m_window.get(); }
    ResultStore* store() const { return m_store.get(); }
    service::ServiceRunControl* control() const { return m_control.get(); }
    QString serviceError() const { return m_serviceError; }

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
    std::unique_ptr<service::ServiceRunControl> m_control;
    QString m_serviceError;
    std::unique_ptr<MainWindow> m_window;
};

} // namespace ty
