// trainyard: the desktop GUI. All wiring lives in ty::Application (ui/).
#include "trainyard/Version.h"
#include "core/common/Paths.h"
#include "core/common/PrivateFiles.h"
#include "ui/i18n/Translations.h"
#include "ui/mainwindow/Application.h"
#include "ui/mainwindow/GuiCommandLine.h"
#include "ui/mainwindow/MainWindow.h"

#include <QApplication>
#include <QMessageBox>
#include <QUrl>

#include <cstdio>

int main(int argc, char* argv[])
{
    // Parsed before QApplication: --version and --help need no display.
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    const ty::GuiCommandLine cmd
            = ty::GuiCommandLine::parse(args, QStringLiteral(TRAINYARD_VERSION), ty::defaultDatabasePath());
    if (cmd.action != ty::GuiCommandLine::Action::Run) {
        const QByteArray text = cmd.text.toLocal8Bit();
        FILE* to = cmd.action == ty::GuiCommandLine::Action::Fail ? stderr : stdout;
        std::fwrite(text.constData(), 1, size_t(text.size()), to);
        return cmd.action == ty::GuiCommandLine::Action::Fail ? 2 : 0;
    }

    ty::makeNewFilesPrivate(); // the database, consoles, runs.env: 0600 whatever the umask
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("trainyard"));
    QApplication::setOrganizationName(QStringLiteral("Trainyard"));
    QApplication::setApplicationVersion(QStringLiteral(TRAINYARD_VERSION));
    ty::installTranslations(&app, QLocale::system()); // Trainyard's strings and Qt's own

    const QString dbPath = cmd.databasePath.isEmpty() ? ty::defaultDatabasePath() : cmd.databasePath;
    auto trainyard = ty::Application::create(dbPath);
    if (!trainyard) {
        QMessageBox::critical(nullptr, QCoreApplication::translate("main", "Trainyard"), trainyard.error().message);
        return 1;
    }
    (*trainyard)->window()->show();
    if (!cmd.submitFile.isEmpty())
        (*trainyard)->submitSpecFile(cmd.submitFile);
    (*trainyard)->openFiles(cmd.files);
    return app.exec();
}
