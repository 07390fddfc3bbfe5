#include "DaemonCommands.h"

#include "Cli.h"
#include "core/common/TerminalEscape.h"
#include "core/service/ServiceClient.h"
#include "core/service/ServiceHandover.h"
#include "core/service/ServicePaths.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTextStream>
#include <QThread>

#include <cerrno>
#include <csignal>

namespace ty::cli {

namespace {

using service::ServiceClient;

int status(const QString& db, bool json, QTextStream& out, QTextStream& err)
{
    auto svc = ServiceClient::connectTo(db, ServiceClient::Start::Never, 3000);
    if (!svc) {
        if (json) {
            out << QJsonDocument(QJsonObject{{QStringLiteral("running"), false},
                                         {QStringLiteral("db"), QFileInfo(db).absoluteFilePath()}})
                            .toJson(QJsonDocument::Compact)
                << '\n';
        } else {
            err << "trainyardctl: " << escapeForTerminal(svc.error().message) << '\n';
        }
        return Unavailable;
    }
    auto s = (*svc)->call(QStringLiteral("status"));
    if (!s) {
        err << "trainyardctl: " << escapeForTerminal(s.error().message) << '\n';
        return Unavailable;
    }
    QJsonObject o = *s;
    o.remove(QStringLiteral("id"));
    o.remove(QStringLiteral("ok"));
    o.insert(QStringLiteral("running"), true);
    o.insert(QStringLiteral("socket"), (*svc)->paths().socket);
    o.insert(QStringLiteral("log"), (*svc)->paths().log);
    if (json) {
        out << QJsonDocument(o).toJson(QJsonDocument::Compact) << '\n';
        return Ok;
    }
    out << "trainyardd " << o.value(QStringLiteral("version")).toString() << " (pid "
        << o.value(QStringLiteral("pid")).toInteger() << ", protocol " << o.value(QStringLiteral("protocol")).toInt()
        << ") serves " << escapeForTerminal(o.value(QStringLiteral("db")).toString()) << '\n';
    out << "  since    "
        << QDateTime::fromString(o.value(QStringLiteral("started_at")).toString(), Qt::ISODateWithMs)
                    .toLocalTime()
                    .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
        << '\n';
    out << "  clients  " << o.value(QStringLiteral("clients")).toInt() << " (this one included)\n";
    out << "  ingests  "
        << (o.value(QStringLiteral("ingests")).toBool() ? "yes" : "no: another process holds the ingestion lock")
        << '\n';
    const QJsonObject runs = o.value(QStringLiteral("runs")).toObject();
    QStringList counts;
    for (auto it = runs.begin(); it != runs.end(); ++it)
        counts << QStringLiteral("%1 %2").arg(it.value().toInt()).arg(it.key());
    out << "  runs     "
        << (counts.isEmpty() ? QStringLiteral("none waiting or running") : counts.join(QStringLiteral(", "))) << '\n';
    QStringList nodes;
    for (const QJsonValue& n : o.value(QStringLiteral("nodes")).toArray())
        nodes << QStringLiteral("%1 (%2)").arg(escapeForTerminal(n.toObject().value(QStringLiteral("name")).toString()),
                n.toObject().value(QStringLiteral("ready")).toBool() ? QStringLiteral("connected")
                                                                     : QStringLiteral("not connected"));
    out << "  nodes    " << nodes.join(QStringLiteral(", ")) << '\n';
    out << "  socket   " << escapeForTerminal((*svc)->paths().socket) << '\n';
    out << "  log      " << escapeForTerminal((*svc)->paths().log) << '\n';
    return Ok;
}

int start(const QString& db, bool persist, QTextStream& out, QTextStream& err)
{
    if (auto running = ServiceClient::connectTo(db, ServiceClient::Start::Never, 3000)) {
        out << "trainyardd is already running (pid " << (*running)->servicePid() << ")\n";
        return Ok;
    }
    QProcess p;
    QStringList args{QStringLiteral("--db"), QFileInfo(db).absoluteFilePath(), QStringLiteral("--detach")};
    if (persist)
        args << QStringLiteral("--persist");
    p.setStandardInputFile(QProcess::nullDevice());
    p.setProcessEnvironment(service::serviceEnvironment());
    p.start(serviceExecutablePath(), args);
    if (!p.waitForStarted(10000) || !p.waitForFinished(30000)) {
        err << "trainyardctl: cannot start " << escapeForTerminal(serviceExecutablePath()) << ": " << p.errorString()
            << '\n';
        return Unavailable;
    }
    const QString said = QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
    if (p.exitCode() != 0 && p.exitCode() != 3) {
        err << escapeForTerminal(said) << '\n';
        return Unavailable;
    }
    auto svc = ServiceClient::connectTo(db, ServiceClient::Start::Never, 10000);
    if (!svc) {
        err << "trainyardctl: " << escapeForTerminal(svc.error().message) << '\n';
        return Unavailable;
    }
    out << "trainyardd started (pid " << (*svc)->servicePid() << ")" << (persist ? ", persistent" : "") << '\n';
    return Ok;
}

int stop(const QString& db, QTextStream& out, QTextStream& err)
{
    const auto stopped = service::stopService(db);
    if (!stopped) {
        err << "trainyardctl: " << escapeForTerminal(stopped.error().message) << '\n';
        return Unavailable;
    }
    if (*stopped == 0)
        out << "trainyardd is not running for " << escapeForTerminal(QFileInfo(db).absoluteFilePath()) << '\n';
    else
        out << "trainyardd (pid " << *stopped << ") stopped; runs keep going on their nodes\n";
    return Ok;
}

int log(const QString& db, int lines, QTextStream& out, QTextStream& err)
{
    auto paths = servicePathsFor(db);
    if (!paths) {
        err << "trainyardctl: " << escapeForTerminal(paths.error().message) << '\n';
        return Unavailable;
    }
    QFile f(paths->log);
    if (!f.open(QIODevice::ReadOnly)) {
        err << "trainyardctl: no service log at " << escapeForTerminal(paths->log) << " (" << f.errorString() << ")\n";
        return Unavailable;
    }
    QByteArray text = f.readAll();
    if (lines > 0) {
        qsizetype at = text.size();
        if (text.endsWith('\n'))
            --at;
        for (int n = 0; n < lines && at > 0; ++n)
            at = text.lastIndexOf('\n', at - 1);
        text = text.mid(at < 0 ? 0 : at + 1);
    }
    out.flush();
    for (const QByteArray& line : text.split('\n'))
        if (!line.isEmpty())
            out << escapeForTerminal(QString::fromUtf8(line)) << '\n';
    return Ok;
}

} // namespace

int daemonCommand(const QString& databasePath, const QStringList& args, QTextStream& out, QTextStream& err)
{
    const QString sub = args.value(0);
    const QStringList rest = args.mid(1);
    if (sub == u"status" && (rest.isEmpty() || rest == QStringList{QStringLiteral("--json")}))
        return status(databasePath, !rest.isEmpty(), out, err);
    if (sub == u"start" && (rest.isEmpty() || rest == QStringList{QStringLiteral("--persist")}))
        return start(databasePath, !rest.isEmpty(), out, err);
    if (sub == u"stop" && rest.isEmpty())
        return stop(databasePath, out, err);
    if (sub == u"log") {
        int lines = 50;
        if (rest.size() == 2 && rest.front() == u"--lines") {
            bool ok = false;
            lines = rest.at(1).toInt(&ok);
            if (!ok || lines < 0) {
                err << "trainyardctl: --lines needs a number >= 0\n";
                return Usage;
            }
        } else if (!rest.isEmpty()) {
            err << "trainyardctl: daemon log takes only --lines N\n";
            return Usage;
        }
        return log(databasePath, lines, out, err);
    }
    err << "trainyardctl: usage: trainyardctl daemon status [--json] | start [--persist] | stop | log [--lines N]\n";
    return Usage;
}

} // namespace ty::cli
