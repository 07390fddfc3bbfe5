#pragma once

// What trainyardctl's commands (Cli.cpp and the *Command(s).cpp beside it)
// share: the output streams, the usage error, how stored strings are
// printed, RUN lookup, the database context and the JSON of a run.
// Everything here runs on the main thread.

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/store/NodeRecord.h"
#include "core/store/ResultStore.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

class QDateTime;
class QJsonDocument;
class QTextStream;

namespace ty::service {
class ServiceClient;
}

namespace ty::cli {

// stdout and stderr as Qt text streams, one each for the whole process.
QTextStream& out();
QTextStream& err();

// "trainyardctl: MESSAGE" and the --help hint on stderr; returns Usage (2).
int usageError(const QString& message);

// Every stored user string printed as text goes through escapedName
// (TerminalEscape.h: control characters escaped, one line). JSON output
// carries the raw strings: JSON's own escaping handles control characters.
QString escapedName(const QString& text);
// The same for a list (argv, tags), joined by `sep`.
QString escapedJoin(const QStringList& parts, const QString& sep);

// A metric value as text: 10 significant digits, "nan", "inf", "-inf".
QString formatValue(double v);
// Local time "yyyy-MM-dd HH:mm:ss", or "-" for an invalid one.
QString localTime(const QDateTime& t);
// ls's column and show's line (RunDuration.h): "42s", "3m05s", "2h07m", "-"
// (not started) or "unknown" (its node is away: the end is not known).
QString duration(const RunRecord& r);
// "0,1" or "-" for none.
QString gpuList(const QList<int>& gpus);

// Resolves RUN (an id, else the newest run of that name) against the store;
// the error says which was looked for ("no run with id 7", "no run named 'x'").
Result<RunRecord> findRun(const ResultStore& store, const QString& spec);

// The database a command works on: its path and the open store.
struct Context {
    QString dbPath;
    std::unique_ptr<ResultStore> store;
};

// Connects to the service of the database, starting it when it is not
// running; says why on stderr when that fails (nullptr then).
// `answerPrompts`: the service's passphrase questions for the nodes it
// connects meanwhile are asked on this terminal (or askpass program);
// `node add`, which has just asked for its own login, leaves them to others.
std::unique_ptr<service::ServiceClient> connectService(const Context& ctx, bool answerPrompts = true);

// The stored node called `name`, if any.
std::optional<NodeRecord> storedNode(const Context& ctx, const QString& name);

// Brings the database up to date before showing it: runs may have printed
// more or ended since the service last recorded them when it was not
// running (after a reboot). With runs not ended, the service is started
// when needed and asked to catch up (at most a few seconds; runs keep going
// afterwards). Returns the nodes whose runs are shown as last recorded
// (said on stderr), or nullopt when the service could not be reached.
std::optional<QStringList> catchUp(Context& ctx);

// ---- JSON output (--json) ----------------------------------------------------
// One document on stdout, indented, as `ls --json` has always printed it.

// A time as ISO 8601 UTC with milliseconds ("2026-12-02T18:36:56.123Z"), or
// null when it is not known (invalid).
QJsonValue jsonTime(const QDateTime& t);
// A metric value: a number, or "nan", "inf", "-inf" (JSON has no such numbers).
QJsonValue jsonNumber(double v);
// One run as `ls --json` lists it: id, name, state, node, gpus, argv,
// workdir, tags, notes, archived, params, created_at, started_at,
// finished_at, exit_code, exit_signal (null when none), pending_reason
// (queued) or failure_reason, latest_metrics {key: value} and notices
// [{at, text}] (`notices`: the run's, as ResultStore::notices gives them).
QJsonObject runJson(const ResultStore& store, const RunRecord& r, const QList<RunNotice>& notices);
// Prints `doc` on stdout, indented, ending with a newline.
void printJson(const QJsonDocument& doc);

} // namespace ty::cli
