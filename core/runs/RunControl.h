#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"
#include "core/nodes/AgentFiles.h"
#include "core/nodes/AgentTypes.h"
#include "core/nodes/SshPassphraseProvider.h"
#include "core/nodes/WorkdirSync.h"
#include "core/store/NodeRecord.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace ty {

struct JobSpec;

// The run engine as a client sees it: what the GUI's views ask of it and the
// live events they hear, whichever process runs the engine. The GUI talks to
// trainyardd through service::ServiceRunControl (core/service); an engine in
// the same process (tests of a view) is reached through LocalRunControl.
// Stored data (runs, metrics, consoles, nodes) is read from the database,
// not through here.
//
// Thread affinity: the thread that created it (the GUI thread). Every call
// returns at once; its callback, and every signal, comes later on that
// thread, never from inside the call. A callback is not called once the
// control is destroyed.
//
// Errors carry the engine's ErrorKind where it had one (NotFound for an
// unknown run or node, InvalidInput, Storage ...); a lost connection to the
// service is an error of kind Unreachable.
class RunControl : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunControl)

public:
    template <typename T> using Reply = std::function<void(const Result<T>&)>;
    enum class QueueAction { Hold, Release, Top, Priority };

    explicit RunControl(QObject* parent = nullptr);
    ~RunControl() override;

    // Records the spec's runs (a sweep gives several, in expansion order) and
    // has them scheduled; `node` pins them (empty: anywhere).
    virtual void submit(const JobSpec& spec, const QString& node, Reply<QList<RunId>> done) = 0;
    // SIGTERM to each run's process group, SIGKILL after `graceMs`; a queued
    // run is cancelled at once. A run that cannot be reached is told as
    // cancelFailed.
    virtual void cancel(const QList<RunId>& runs, int graceMs = 10000) = 0;
    // hold, release, move to top, or set the priority (`priority`, for
    // Priority only) of a waiting run (RunEngine::hold and the rest).
    virtual void queue(RunId run, QueueAction action, int priority, Reply<void> done) = 0;
    // The run's artifacts as its node lists them, and a copy of them into
    // `destDir` (RunEngine::listArtifacts, downloadArtifacts).
    virtual void listArtifacts(RunId run, Reply<AgentFileList> done) = 0;
    virtual void downloadArtifacts(RunId run, const QString& destDir, Reply<ArtifactDownload> done) = 0;
    // Stores the node and connects it; `acceptNewHostKey`: a host key not in
    // known_hosts yet is added (a changed one is still refused). Its status
    // comes as nodeStatusChanged. Errors: a stored node of that name, the write.
    virtual void addNode(const NodeRecord& node, bool acceptNewHostKey, Reply<void> done) = 0;
    // The SHA-256 fingerprint of the unknown host key the node's last
    // connection refused (empty: none), and trusting it: the next
    // reconnection records it in known_hosts (false: no such node or key).
    virtual void rejectedHostKey(const QString& node, Reply<QString> done) = 0;
    virtual void trustHostKey(const QString& node, Reply<bool> done) = 0;
    // The user's words about a run (rename, tags, notes, archive: each field
    // of `a` that is set), once committed (ResultStore::annotateRun's checks:
    // an empty name, a tag with a space, archiving a run not ended).
    virtual void annotate(RunId run, const RunAnnotation& a, Reply<void> done) = 0;
    // Deletes an ended run: its record, metrics and local folder
    // (core/runs/RunRemoval.h); nothing on its node. Errors: NotFound, a
    // run not ended (InvalidInput), the write.
    virtual void deleteRun(RunId run, Reply<void> done) = 0;
    // consoleReceived for `run` from byte `fromOffset` of its local copy on,
    // live, until unfollowConsole(); bytes before what was asked may come
    // too (ConsoleView drops what it holds).
    virtual void followConsole(RunId run, qint64 fromOffset) = 0;
    virtual void unfollowConsole(RunId run) = 0;
    // The answer to passphraseRequested `prompt` (nullopt: declined).
    virtual void answerPassphrase(qint64 prompt, const std::optional<QByteArray>& passphrase) = 0;
    // The answers to loginQuestionsRequested `prompt`, one per prompt
    // (nullopt: declined).
    virtual void answerLoginQuestions(qint64 prompt, const std::optional<QList<QByteArray>>& answers) = 0;

    // Pipelines (core/pipeline), which only the service runs: a pipeline
    // spec as PROTOCOL.md's pipeline_submit carries it ({yaml, origin,
    // base_dir, source_path, params}), answered with the pipeline's id;
    // cancel; resume a failed or cancelled one (answered with the new id).
    // Errors: the spec's (InvalidInput, file:line:column), NotFound for an
    // unknown pipeline, InvalidInput for one in the wrong state; an engine
    // in this process answers InvalidInput ("pipelines run in trainyardd").
    virtual void submitPipeline(const QJsonObject& spec, const QString& node, Reply<qint64> done) = 0;
    virtual void cancelPipeline(qint64 pipeline, Reply<void> done) = 0;
    virtual void resumePipeline(qint64 pipeline, Reply<qint64> done) = 0;
    // Memoization's entries removed (PROTOCOL.md memo_rm: {key} | {step,
    // pipeline} | {all} | {older_than_s} | {max_bytes}), answered with the
    // keys removed. NotFound for an unknown key; an engine in this process
    // answers InvalidInput, as for pipelines.
    virtual void removeMemoEntries(const QJsonObject& selector, Reply<QStringList> done) = 0;

Q_SIGNALS:
    // A run changed state (any run).
    void runStateChanged(const ty::RunRecord& run);
    // Console bytes [offset, offset + bytes.size()) of a run's local copy:
    // at least those of the runs followed.
    void consoleReceived(ty::RunId run, qint64 offset, const QByteArray& bytes);
    // Metric points just extracted from any run (already on their way into
    // the database).
    void metricsReceived(ty::RunId run, const QList<ty::MetricPoint>& points);
    // Why each waiting run waits, after a scheduling pass.
    void pendingReasonsChanged(const QHash<ty::RunId, QString>& reasons);
    // A node connected, or was lost (`reason`, `kind` as RunEngine's).
    void nodeStatusChanged(
            const QString& node, bool ready, const QString& reason, ty::ErrorKind kind = ty::ErrorKind::Unspecified);
    // A node's connection came up with a warning (a changed host key accepted).
    void nodeWarning(const QString& node, const QString& message);
    void cancelFailed(ty::RunId run, const QString& reason);
    // The GPUs a ready node reports, every couple of seconds.
    void nodeGpusUpdated(const QString& node, const QList<ty::AgentGpu>& gpus);
    void noticeAdded(ty::RunId run, const QString& text);
    // The engine's SSH session for `node` needs the passphrase of an
    // encrypted key (`text` names the key file, as OpenSSH's prompt does);
    // answer with answerPassphrase(), or the session gives up after 2 min.
    void passphraseRequested(qint64 prompt, const QString& node, const QString& text);
    // The engine's SSH session for `node` asks keyboard-interactive questions
    // (a one-time code, a Duo prompt: SshPassphraseProvider::answers());
    // answer with answerLoginQuestions(), or the session gives up after 2 min.
    void loginQuestionsRequested(qint64 prompt, const QString& node, const ty::SshLoginQuestions& questions);
    // The engine is reachable again after it was not (the service was
    // restarted): runs may have changed meanwhile, so a view reloads.
    void reconnected();
    // A pipeline or one of its steps changed: PROTOCOL.md's Pipeline object.
    void pipelineChanged(const QJsonObject& pipeline);
};

} // namespace ty
