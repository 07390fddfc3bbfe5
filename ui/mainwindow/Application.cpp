#include "Application.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QPointer>
#include <QUrl>

#include "MainWindow.h"
#include "ui/dialogs/PassphraseDialog.h"
#include "core/nodes/AgentTransport.h"
#include "core/nodes/NodeTransports.h"
#include "core/nodes/SshNodeOptions.h"
#include "core/runs/RunEngine.h"
#include "core/service/ServiceHandover.h"
#include "core/service/ServicePaths.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

namespace ty {

Result<std::unique_ptr<Application>> Application::create(const QString& databasePath, const QString& agentPath)
{
    // A database this user cannot write (a colleague's, on a read-only share)
    // is shown read-only; the window says so (MainWindow::updateStoreNotice).
    auto store = ResultStore::open(databasePath, StoreAccess::ReadOnlyIfNeeded);
    if (!store)
        return std::unexpected(store.error());
    std::unique_ptr<Application> app(new Application);
    app->m_store = std::move(*store);
    // The window runs the engine itself while it is open (live consoles and
    // curves come from it): a running service hands it over, and a new one
    // is started once this engine holds the database, to take over when the
    // window closes, so closing it stops nothing.
    if (auto stopped = app->m_store->isReadOnly() ? Result<qint64>(0) : service::stopService(databasePath); !stopped)
        qWarning().noquote() << "the Trainyard service did not hand over:" << stopped.error().message;

    app->m_engine = new RunEngine(app->m_store.get(), databasePath);
    app->m_engine->moveToThread(&app->m_engineThread);
    app->m_engineThread.setObjectName(QStringLiteral("run-engine"));
    app->m_engineThread.start();

    // The window connects to the engine's signals before the node starts, so
    // the first nodeStatusChanged is not missed.
    app->m_window = std::make_unique<MainWindow>(app->m_store.get(), app->m_engine);

    RunEngine* engine = app->m_engine;
    // Every node stored with `trainyardctl node add` or the Nodes view,
    // besides this machine; an encrypted key asks for its passphrase in a
    // dialog (never stored).
    const QList<NodeRecord> nodes = app->m_store->nodes();
    auto passphrases = std::make_shared<GuiPassphraseProvider>(app->m_window.get());
    // The agent's QProcess and the SSH sessions must be created on the engine's thread.
    QPointer<Application> self = app.get();
    const bool readOnly = app->m_store->isReadOnly();
    QMetaObject::invokeMethod(
            engine,
            [engine, agentPath, nodes, passphrases, self, databasePath, readOnly] {
                // Read-only: nothing it ingests could be recorded, and no service can serve it.
                const bool owner = !readOnly && engine->acquireIngestion();
                if (owner)
                    QMetaObject::invokeMethod(
                            qApp,
                            [self, databasePath] {
                                if (self && !service::startServiceInBackground(databasePath))
                                    qWarning() << "cannot start the Trainyard service" << serviceExecutablePath();
                            },
                            Qt::QueuedConnection);
                engine->addLocalNode(agentPath);
                for (const NodeRecord& n : nodes)
                    engine->addNode(n.name, transportForNode(n, agentPath, passphrases));
            },
            Qt::QueuedConnection);
    return app;
}

Application::~Application()
{
    m_window.reset();
    if (m_engine) {
        RunEngine* engine = m_engine;
        QMetaObject::invokeMethod(
                engine, [engine] { delete engine; }, Qt::BlockingQueuedConnection);
        m_engine = nullptr;
    }
    m_engineThread.quit();
    m_engineThread.wait();
    if (m_store)
        (void)m_store->flush();
}

void Application::submitSpecFile(const QString& path)
{
    auto spec = parseJobSpecFile(path);
    if (spec)
        m_window->submit(*spec);
    else
        m_window->openSpecDialog(path); // shows the text and the error with line:column
}

void Application::openFiles(const QStringList& paths)
{
    if (paths.isEmpty())
        return;
    QList<QUrl> urls;
    for (const QString& p : paths)
        urls << QUrl::fromLocalFile(QFileInfo(p).absoluteFilePath());
    m_window->openPaths(urls);
}

} // namespace ty
