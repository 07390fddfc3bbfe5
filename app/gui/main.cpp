// trainyard: the desktop GUI. All wiring lives in ty::Application (ui/).
#include "common/Paths.h"
#include "common/PrivateFiles.h"
#include "mainwindow/Application.h"
#include "mainwindow/MainWindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>

int main(int argc, char* argv[])
{
    ty::makeNewFilesPrivate(); // the database, consoles, runs.env: 0600 whatever the umask
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("trainyard"));
    QApplication::setOrganizationName(QStringLiteral("Trainyard"));
    QApplication::setApplicationVersion(QStringLiteral(TRAINYARD_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Trainyard: run, watch and compare training jobs."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption db(QStringLiteral("db"), QStringLiteral("Result database (default: $TRAINYARD_DB, else %1).")
                                                          .arg(ty::defaultDatabasePath()), QStringLiteral("PATH"));
    const QCommandLineOption submit(QStringLiteral("submit"), QStringLiteral("Submit this job spec at start."), QStringLiteral("FILE"));
    parser.addOption(db);
    parser.addOption(submit);
    parser.process(app);

    const QString dbPath = parser.isSet(db) ? parser.value(db) : ty::defaultDatabasePath();
    auto trainyard = ty::Application::create(dbPath, ty::localAgentPath());
    if (!trainyard) {
        QMessageBox::critical(nullptr, QStringLiteral("Trainyard"), trainyard.error().message);
        return 1;
    }
    (*trainyard)->window()->show();
    if (parser.isSet(submit))
        (*trainyard)->submitSpecFile(parser.value(submit));
    return app.exec();
}
