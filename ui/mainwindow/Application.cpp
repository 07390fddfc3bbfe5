#include "Application.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QUrl>

#include "MainWindow.h"
#include "ui/dialogs/PassphraseDialog.h"
#include "ui/settings/GuiSettings.h"
#include "core/service/ServiceRunControl.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

namespace ty {

Result<std::unique_ptr<Application>> Application::create(const QString& databasePath)
{
    // The colour theme of Settings (system, light, dark) before any window.
    applyTheme(themeSetting());
    // A database this user cannot write (a colleague's, on a read-only share)
    // is shown read-only; the window says so (MainWindow::updateStoreNotice).
    auto store = ResultStore::open(databasePath, StoreAccess::ReadOnlyIfNeeded);
    if (!store)
        return std::unexpected(store.error());
    std::unique_ptr<Application> app(new Application);
    app->m_store = std::move(*store);
    // The engine lives in trainyardd (started here when none runs): the
    // window is one of its clients, so closing it stops nothing. A database
    // opened read-only has no service (it could record nothing).
    if (!app->m_store->isReadOnly()) {
        auto control = service::ServiceRunControl::connectTo(databasePath);
        if (control)
            app->m_control = std::move(*control);
        else
            app->m_serviceError = control.error().message;
    }
    app->m_window = std::make_unique<MainWindow>(app->m_store.get(), app->m_control.get());
    if (app->m_control) {
        // The service's SSH sessions ask this window for a key's passphrase
        // (the dialog, or the keychain's remembered one); asked once the
        // signal has returned, as the dialog waits in its own loop.
        auto passphrases = std::make_shared<GuiPassphraseProvider>(app->m_window.get());
        service::ServiceRunControl* control = app->m_control.get();
        QObject::connect(control, &RunControl::passphraseRequested, control,
                [control, passphrases](qint64 prompt, const QString& node, const QString& text) {
                    QMetaObject::invokeMethod(
                            control,
                            [control, passphrases, prompt, node, text] {
                                control->answerPassphrase(prompt, passphrases->passphrase(node, text));
                            },
                            Qt::QueuedConnection);
                });
        // And its keyboard-interactive questions (a one-time code), in LoginQuestionsDialog.
        QObject::connect(control, &RunControl::loginQuestionsRequested, control,
                [control, passphrases](qint64 prompt, const QString& node, const SshLoginQuestions& questions) {
                    QMetaObject::invokeMethod(
                            control,
                            [control, passphrases, prompt, node, questions] {
                                control->answerLoginQuestions(prompt, passphrases->answers(node, questions));
                            },
                            Qt::QueuedConnection);
                });
    }
    if (!app->m_serviceError.isEmpty()) {
        qWarning().noquote() << "no Trainyard service:" << app->m_serviceError;
        app->m_window->setNoEngineReason(app->m_serviceError);
    }
    return app;
}

Application::~Application()
{
    m_window.reset();
    m_control.reset(); // the service goes on
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
