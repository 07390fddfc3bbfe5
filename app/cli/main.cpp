#include "Cli.h"

#include <QCoreApplication>

int main(int argc, char* argv[])
{
    ty::cli::installMessageHandler();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("trainyard"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TRAINYARD_VERSION));
    return ty::cli::run(QCoreApplication::arguments());
}
