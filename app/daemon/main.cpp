// trainyardd: the per-user service of one result database (core/service).
#include "trainyard/Version.h"
#include "core/common/Paths.h"
#include "core/common/PrivateFiles.h"
#include "core/service/Daemonize.h"
#include "core/service/ServiceHost.h"
#include "core/service/ServicePaths.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QSocketNotifier>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

int g_signalPipe[2] = {-1, -1};
extern "C" void onTerminate(int)
{
    (void)!::write(g_signalPipe[1], "x", 1);
}

void logLine(QtMsgType type, const QMessageLogContext&, const QString& message)
{
    static const char* const kinds[] = {"debug", "warning", "critical", "fatal", "info"};
    std::fprintf(stderr, "%s trainyardd[%d] %s: %s\n",
            qPrintable(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)), int(::getpid()),
            kinds[std::min<int>(int(type), 4)], qPrintable(message));
    std::fflush(stderr);
}

// --db and --detach before QCoreApplication: detaching forks, which must
// happen before Qt starts any thread.
QString argValue(int argc, char** argv, const char* name)
{
    const std::string eq = std::string(name) + "=";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], name) == 0 && i + 1 < argc)
            return QString::fromLocal8Bit(argv[i + 1]);
        if (std::strncmp(argv[i], eq.c_str(), eq.size()) == 0)
            return QString::fromLocal8Bit(argv[i] + eq.size());
    }
    return {};
}

bool hasFlag(int argc, char** argv, const char* name)
{
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return true;
    return false;
}

} // namespace

int main(int argc, char* argv[])
{
    // The runs get the umask of the user's shell that started the service
    // (its client passes it on); the service's own files are private.
    if (const char* user = std::getenv("TRAINYARD_USER_UMASK")) {
        char* end = nullptr;
        const long mask = std::strtol(user, &end, 8);
        if (end && *end == '\0' && mask >= 0 && mask <= 0777)
            ::umask(mode_t(mask));
        ::unsetenv("TRAINYARD_USER_UMASK");
    }
    ty::makeNewFilesPrivate();
    int ready = -1;
    if (hasFlag(argc, argv, "--detach")) {
        QString db = argValue(argc, argv, "--db");
        if (db.isEmpty())
            db = ty::defaultDatabasePath();
        auto paths = ty::servicePathsFor(db);
        if (!paths) {
            std::fprintf(stderr, "trainyardd: %s\n", qPrintable(paths.error().message));
            return 1;
        }
        std::string error;
        ready = ty::service::detach(QFile::encodeName(paths->log).toStdString(), &error);
        if (ready < 0) {
            std::fprintf(stderr, "trainyardd: cannot detach: %s\n", error.c_str());
            return 1;
        }
    }
    qInstallMessageHandler(logLine);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("trainyard"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TRAINYARD_VERSION));
    // Tests only (ctest sets TRAINYARD_TEST=1): pose as another version, to
    // test the hand-over of an older service to a newer client.
    if (qEnvironmentVariable("TRAINYARD_TEST") == u"1" && qEnvironmentVariableIsSet("TRAINYARD_TEST_SERVICE_VERSION"))
        QCoreApplication::setApplicationVersion(qEnvironmentVariable("TRAINYARD_TEST_SERVICE_VERSION"));

    QCommandLineParser p;
    p.setApplicationDescription(
            QStringLiteral("The Trainyard service: owns the queue, the nodes and ingestion of one result database."));
    p.addHelpOption();
    p.addVersionOption();
    p.addOption({QStringLiteral("db"),
            QStringLiteral("result database (default: $TRAINYARD_DB, else ~/.local/share/trainyard/trainyard.db)"),
            QStringLiteral("PATH")});
    p.addOption({QStringLiteral("detach"),
            QStringLiteral("run in the background (own session, log to the state folder); exit once listening")});
    p.addOption({QStringLiteral("persist"), QStringLiteral("never stop when idle")});
    p.addOption({QStringLiteral("idle-exit"),
            QStringLiteral(
                    "stop after this many seconds with no work and no client (default $TRAINYARD_DAEMON_IDLE, else 300)"),
            QStringLiteral("SECONDS")});
    p.process(app);

    ty::service::ServiceHost::Options options;
    options.databasePath = p.isSet(QStringLiteral("db")) ? p.value(QStringLiteral("db")) : ty::defaultDatabasePath();
    options.persist = p.isSet(QStringLiteral("persist"));
    const QString idle = p.isSet(QStringLiteral("idle-exit")) ? p.value(QStringLiteral("idle-exit"))
                                                              : qEnvironmentVariable("TRAINYARD_DAEMON_IDLE");
    if (!idle.isEmpty()) {
        bool ok = false;
        options.idleExitSec = idle.toInt(&ok);
        if (!ok || options.idleExitSec < 1) {
            const QString why = QStringLiteral("trainyardd: --idle-exit needs a whole number of seconds >= 1, not '%1'")
                                        .arg(idle);
            std::fprintf(stderr, "%s\n", qPrintable(why));
            ty::service::reportFailure(ready, 1, why.toStdString());
            return 2;
        }
    }

    ty::service::ServiceHost host(options);
    ty::service::ServiceHost::StartError why{};
    if (auto started = host.start(&why); !started) {
        const QString message = QStringLiteral("trainyardd: %1").arg(started.error().message);
        const int status = why == ty::service::ServiceHost::StartError::LockHeld ? 3 : 1;
        if (ready < 0) {
            std::fprintf(stderr, "%s\n", qPrintable(message));
        } else {
            qWarning().noquote() << started.error().message; // the log
            ty::service::reportFailure(ready, status, message.toStdString());
        }
        return status;
    }
    // SIGTERM, SIGINT, SIGHUP: stop cleanly (runs keep going on their nodes).
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g_signalPipe) == 0) {
        auto* notifier = new QSocketNotifier(g_signalPipe[0], QSocketNotifier::Read, &app);
        QObject::connect(notifier, &QSocketNotifier::activated, &app, [] {
            qInfo() << "signal received: stopping";
            QCoreApplication::quit();
        });
        struct sigaction sa { };
        sa.sa_handler = onTerminate;
        ::sigaction(SIGTERM, &sa, nullptr);
        ::sigaction(SIGINT, &sa, nullptr);
        ::sigaction(SIGHUP, &sa, nullptr);
    }
    std::signal(SIGPIPE, SIG_IGN);
    QObject::connect(&host, &ty::service::ServiceHost::stopRequested, &app, &QCoreApplication::quit);
    ty::service::reportReady(ready);
    const int rc = QCoreApplication::exec();
    host.shutDown();
    qInfo() << "stopped";
    return rc;
}
