#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/nodes/AgentFiles.h"
#include "core/nodes/AgentTypes.h"
#include "core/nodes/SshPassphraseProvider.h"
#include "core/store/NodeRecord.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>

#include <optional>
#include <QList>

namespace ty {
struct JobSpec;
}

namespace ty::service {

// The protocol between trainyardd and its clients (the GUI, trainyardctl):
// one JSON object per line, UTF-8, over the service's Unix-domain socket.
// The full message list is PROTOCOL.md beside this file.
//
// Revision history (kProtocol):
//   1  hello, status, submit, cancel, watch, caught_up, stop; events state,
//      console, pending, node, cancel_failed, watch_ended
//   2  the GUI as a client: subscribe `metrics` and `gpus`; events metrics,
//      gpus, node_warning; ops node_add, host_key, trust_host_key, artifacts,
//      download_artifacts; a run's whole record in `state`
inline constexpr int kProtocol = 2;

// A line longer than this (a job spec is a few KiB; console chunks are cut
// to 64 KiB before base64) is refused and the connection closed.
inline constexpr qsizetype kMaxLineBytes = 8 * 1024 * 1024;

// Splits a byte stream into lines. feed() appends; next() returns each whole
// line without its '\n'. overflowed(): more than kMaxLineBytes without one.
class LineBuffer {
public:
    void feed(const QByteArray& bytes) { m_buf += bytes; }
    bool next(QByteArray* line);
    bool overflowed() const { return m_buf.size() > kMaxLineBytes && !m_buf.contains('\n'); }

private:
    QByteArray m_buf;
    qsizetype m_scanned = 0;
};

// One message as a line (compact JSON and '\n').
QByteArray encode(const QJsonObject& message);
// A line as an object. Errors: not JSON, or not an object ("line 3 ...").
Result<QJsonObject> decode(const QByteArray& line);

// The `console` event, the one message that carries bulk (a followed run's
// console, up to ~7 MB/s at 100k lines/s), written and read without a
// QJsonObject: the same line encode() makes of {"event": "console", "run",
// "offset", "data": base64} (keys sorted, compact), byte for byte, built
// directly, where encode() turned the base64 into UTF-16 and back and
// decode() parsed it into a QString. Any thread.
struct ConsoleEvent {
    qint64 run = 0;
    qint64 offset = 0;
    QByteArray bytes; // decoded
};
QByteArray encodeConsoleEvent(qint64 run, qint64 offset, QByteArrayView bytes);
// The event of `line` when it is exactly encodeConsoleEvent's shape (with or
// without its '\n'); nullopt for any other line (read it with decode()).
std::optional<ConsoleEvent> decodeConsoleEvent(const QByteArray& line);

// What a client learns of a run in `state` events and submit replies: the
// fields trainyardctl prints and the GUI's table shows (times as ISO 8601
// UTC with milliseconds; absent optionals are absent keys).
QJsonObject runToJson(const RunRecord& run);
RunRecord runFromJson(const QJsonObject& o);
// RunRecord::groups as JSON: [{"group": 12, "kind": "sweep", "position": 0,
// "role": "lr=0.1"}, ...] (runToJson's "groups", trainyardctl's --json);
// back again, leaving out an entry of a kind this version does not know.
QJsonArray membershipsToJson(const QList<RunGroupMembership>& groups);
QList<RunGroupMembership> membershipsFromJson(const QJsonValue& v);

// A `submit` op's `spec` for a spec in hand (the GUI's): its text, where it
// came from, and the workdir it resolved to, so the service's parse gives
// the same spec.
QJsonObject submitSpecToJson(const JobSpec& spec);

// A `metrics` event's points: [key, step, value, wall_ms(, epoch)] each.
// Malformed entries are skipped on reading.
QJsonArray metricPointsToJson(const QList<MetricPoint>& points);
QList<MetricPoint> metricPointsFromJson(RunId run, const QJsonArray& points);

// A `gpus` event's GPUs and an `artifacts` reply's listing, with the agent
// protocol's field names (app/agent/PROTOCOL.md), so a client reads them with
// agentGpusFromJson() and agentFileListFromJson() (core/nodes).
QJsonArray gpusToJson(const QList<AgentGpu>& gpus);
QJsonObject fileListToJson(const AgentFileList& list);

// A keyboard-interactive round in a `prompt` event (kind
// keyboard_interactive): `name`, `instruction`, `prompts` ([{`text`,
// `echo`}]); back again (missing fields empty, false).
QJsonObject loginQuestionsToJson(const SshLoginQuestions& questions);
SshLoginQuestions loginQuestionsFromJson(const QJsonObject& o);

// A node as `node_add` carries it (name, host, user, port, identity_file,
// agent_path, labels, kind, node_lost_after_sec). Reading checks what
// `trainyardctl node add` checks: a valid name that is not "local", a host, a
// port of 1..65535, a node_lost_after_sec (seconds) of at least 1 or null
// (InvalidInput, naming the node and the field).
QJsonObject nodeToJson(const NodeRecord& node);
Result<NodeRecord> nodeFromJson(const QJsonObject& o);

// The `annotate` op's fields (PROTOCOL.md): each of `name`, `tags` (array of
// strings), `notes`, `archived` (bool) present when it is to change. A field
// of the wrong JSON type is an error naming it (InvalidInput).
QJsonObject annotationToJson(const RunAnnotation& a);
Result<RunAnnotation> annotationFromJson(const QJsonObject& o);

// The `kind` of a failed reply (PROTOCOL.md "Requests and replies") for an
// error: NotFound is `notFound` (`no_such_run` or `no_such_node`, what the op
// looks up), InvalidInput `invalid_input`, a database that could not be
// written or read (Storage, ReadOnly, Damaged) `storage`, Version `version`;
// an error of no kind is `unspecified` (`invalid_input` or `storage`: what
// the op's untagged errors are, e.g. the store's failed writes).
QString replyKind(
        const Error& error, const QString& notFound, const QString& unspecified = QStringLiteral("invalid_input"));
// And back, for the client: the ErrorKind of a reply's `kind`.
ErrorKind errorKindOfReply(const QString& kind);

} // namespace ty::service
