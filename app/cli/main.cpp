#include "trainyard/Version.h"
#include "Cli.h"
#include "core/common/PrivateFiles.h"

#include <QCoreApplication>

int main(int argc, char* argv[])
{
    ty::makeNewFilesPrivate(); // the database, consoles, runs.env: 0600 whatever the umask
    ty::cli::installMessageHandler();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("trainyard"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TRAINYARD_VERSION));
    return ty::cli::run(QCoreApplication::arguments());
}
