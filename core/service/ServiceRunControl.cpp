#include "ServiceRunControl.h"

#include "ServiceClient.h"
#include "ServiceProtocol.h"
#include "core/spec/JobSpec.h"

#include <QJsonArray>
#include <QLoggingCategory>
#include <QPointer>
#include <QTimer>

Q_DECLARE_LOGGING_CATEGORY(lcService)

namespace ty::service {

namespace {

constexpr int kReconnectFirstMs = 250;
constexpr int kReconnectMaxMs = 5000;
constexpr int kReconnectTimeoutMs = 5000;

Result<void> noReply(const QJsonObject&)
{
    return {};
}

} // namespace

ServiceRunControl::ServiceRunControl(QString databasePath)
    : m_databasePath(std::move(databasePath))
{
    m_reconnectTimer = new QTimer(this);
    m_reconnectTimer->setSingleShot(true);
    connect(m_reconnectTimer, &QTimer::timeout, this, &ServiceRunControl::reconnect);
}

ServiceRunControl::~ServiceRunControl() = default;

Result<std::unique_ptr<ServiceRunControl>> ServiceRunControl::connectTo(const QString& databasePath, int timeoutMs)
{
    auto client = ServiceClient::connectTo(databasePath, ServiceClient::Start::IfNeeded, timeoutMs);
    if (!client)
        return std::unexpected(client.error());
    std::unique_ptr<ServiceRunControl> control(new ServiceRunControl(databasePath));
    control->attach(std::move(*client));
    return control;
}

bool ServiceRunControl::connectedToService() const
{
    return m_client && m_client->connected();
}

qint64 ServiceRunControl::servicePid() const
{
    return m_client ? m_client->servicePid() : 0;
}

void ServiceRunControl::attach(std::unique_ptr<ServiceClient> client)
{
    m_client = std::move(client);
    ServiceClient* c = m_client.get();
    connect(c, &ServiceClient::runStateChanged, this, &RunControl::runStateChanged);
    connect(c, &ServiceClient::consoleReceived, this, [this](RunId run, qint64 offset, const QByteArray& bytes) {
        if (auto it = m_followed.find(run); it != m_followed.end())
            *it = std::max(*it, offset + bytes.size());
        Q_EMIT consoleReceived(run, offset, bytes);
    });
    connect(c, &ServiceClient::metricsReceived, this, &RunControl::metricsReceived);
    connect(c, &ServiceClient::pendingReasonsChanged, this, &RunControl::pendingReasonsChanged);
    connect(c, &ServiceClient::nodeStatusChanged, this, &RunControl::nodeStatusChanged);
    connect(c, &ServiceClient::nodeWarning, this, &RunControl::nodeWarning);
    connect(c, &ServiceClient::cancelFailed, this, &RunControl::cancelFailed);
    connect(c, &ServiceClient::nodeGpusUpdated, this, &RunControl::nodeGpusUpdated);
    connect(c, &ServiceClient::noticeAdded, this, &RunControl::noticeAdded);
    connect(c, &ServiceClient::promptReceived, this, &RunControl::passphraseRequested);
    connect(c, &ServiceClient::loginPromptReceived, this, &RunControl::loginQuestionsRequested);
    connect(c, &ServiceClient::pipelineChanged, this, &RunControl::pipelineChanged);
    connect(c, &ServiceClient::disconnected, this, &ServiceRunControl::onDisconnected);
    c->request(QStringLiteral("subscribe"),
            {{QStringLiteral("runs"), true}, {QStringLiteral("metrics"), true}, {QStringLiteral("gpus"), true},
                    {QStringLiteral("prompts"), true}, {QStringLiteral("pipelines"), true}},
            [](const Result<QJsonObject>& r) {
                if (!r)
                    qCWarning(lcService).noquote() << "subscribing to the service failed:" << r.error().message;
            });
    for (auto it = m_followed.cbegin(); it != m_followed.cend(); ++it)
        watchConsole(it.key(), it.value());
}

void ServiceRunControl::onDisconnected()
{
    qCWarning(lcService) << "the Trainyard service went away; reconnecting";
    // Not deleted here: this runs inside one of its signals.
    if (m_client) {
        m_client->disconnect(this);
        m_client.release()->deleteLater();
    }
    m_reconnectDelayMs = kReconnectFirstMs;
    m_reconnectTimer->start(m_reconnectDelayMs);
}

void ServiceRunControl::reconnect()
{
    auto client = ServiceClient::connectTo(m_databasePath, ServiceClient::Start::IfNeeded, kReconnectTimeoutMs);
    if (!client) {
        qCWarning(lcService).noquote() << "reconnecting to the Trainyard service:" << client.error().message;
        m_reconnectDelayMs = std::min(m_reconnectDelayMs * 2, kReconnectMaxMs);
        m_reconnectTimer->start(m_reconnectDelayMs);
        return;
    }
    attach(std::move(*client));
    Q_EMIT reconnected();
}

template <typename T>
void ServiceRunControl::ask(
        const QString& op, QJsonObject args, Reply<T> done, std::function<Result<T>(const QJsonObject&)> take)
{
    QPointer<ServiceRunControl> self(this);
    auto answer = [self, done, take](const Result<QJsonObject>& r) {
        if (!self || !done)
            return;
        if (!r)
            done(std::unexpected(r.error()));
        else
            done(take(*r));
    };
    if (!m_client) {
        const Error e{QStringLiteral("not connected to the Trainyard service (reconnecting)"), ErrorKind::Unreachable};
        QMetaObject::invokeMethod(
                this, [answer, e] { answer(std::unexpected(e)); }, Qt::QueuedConnection);
        return;
    }
    m_client->request(op, std::move(args), answer);
}

void ServiceRunControl::submit(const JobSpec& spec, const QString& node, Reply<QList<RunId>> done)
{
    ask<QList<RunId>>(QStringLiteral("submit"),
            {{QStringLiteral("spec"), submitSpecToJson(spec)}, {QStringLiteral("node"), node}}, done,
            [](const QJsonObject& r) -> Result<QList<RunId>> {
                QList<RunId> ids;
                for (const QJsonValue& v : r.value(QStringLiteral("runs")).toArray())
                    ids.append(v.toInteger());
                return ids;
            });
}

void ServiceRunControl::cancel(const QList<RunId>& runs, int graceMs)
{
    for (RunId run : runs)
        ask<void>(
                QStringLiteral("cancel"), {{QStringLiteral("run"), run}, {QStringLiteral("grace_ms"), graceMs}},
                [this, run](const Result<void>& r) {
                    // A refusal (no such run) is told like one the node gave.
                    if (!r)
                        Q_EMIT cancelFailed(run, r.error().message);
                },
                noReply);
}

void ServiceRunControl::queue(RunId run, QueueAction action, int priority, Reply<void> done)
{
    static const char* const names[] = {"hold", "release", "top", "priority"};
    QJsonObject args{{QStringLiteral("run"), run},
            {QStringLiteral("action"), QString::fromLatin1(names[static_cast<int>(action)])}};
    if (action == QueueAction::Priority)
        args.insert(QStringLiteral("priority"), priority);
    ask<void>(QStringLiteral("queue"), args, done, noReply);
}

void ServiceRunControl::listArtifacts(RunId run, Reply<AgentFileList> done)
{
    ask<AgentFileList>(QStringLiteral("artifacts"), {{QStringLiteral("run"), run}}, done,
            [](const QJsonObject& r) -> Result<AgentFileList> {
                return agentFileListFromJson(r.value(QStringLiteral("list")).toObject());
            });
}

void ServiceRunControl::downloadArtifacts(RunId run, const QString& destDir, Reply<ArtifactDownload> done)
{
    ask<ArtifactDownload>(QStringLiteral("download_artifacts"),
            {{QStringLiteral("run"), run}, {QStringLiteral("dest"), destDir}}, done,
            [](const QJsonObject& r) -> Result<ArtifactDownload> {
                ArtifactDownload d;
                for (const QJsonValue& v : r.value(QStringLiteral("downloaded")).toArray())
                    d.downloaded << v.toString();
                for (const QJsonValue& v : r.value(QStringLiteral("refused")).toArray())
                    d.refused << v.toString();
                return d;
            });
}

void ServiceRunControl::addNode(const NodeRecord& node, bool acceptNewHostKey, Reply<void> done)
{
    ask<void>(QStringLiteral("node_add"),
            {{QStringLiteral("node"), nodeToJson(node)}, {QStringLiteral("accept_new_host_key"), acceptNewHostKey}},
            done, noReply);
}

void ServiceRunControl::rejectedHostKey(const QString& node, Reply<QString> done)
{
    ask<QString>(QStringLiteral("host_key"), {{QStringLiteral("node"), node}}, done,
            [](const QJsonObject& r) -> Result<QString> { return r.value(QStringLiteral("fingerprint")).toString(); });
}

void ServiceRunControl::trustHostKey(const QString& node, Reply<bool> done)
{
    ask<bool>(QStringLiteral("trust_host_key"), {{QStringLiteral("node"), node}}, done,
            [](const QJsonObject& r) -> Result<bool> { return r.value(QStringLiteral("trusted")).toBool(); });
}

void ServiceRunControl::annotate(RunId run, const RunAnnotation& a, Reply<void> done)
{
    QJsonObject args = annotationToJson(a);
    args.insert(QStringLiteral("run"), run);
    ask<void>(QStringLiteral("annotate"), args, done, noReply);
}

namespace {
Result<qint64> pipelineIdOf(const QJsonObject& r)
{
    return r.value(QStringLiteral("pipeline")).toObject().value(QStringLiteral("id")).toInteger();
}
} // namespace

void ServiceRunControl::submitPipeline(const QJsonObject& spec, const QString& node, Reply<qint64> done)
{
    ask<qint64>(QStringLiteral("pipeline_submit"), {{QStringLiteral("spec"), spec}, {QStringLiteral("node"), node}},
            done, pipelineIdOf);
}

void ServiceRunControl::cancelPipeline(qint64 pipeline, Reply<void> done)
{
    ask<void>(QStringLiteral("pipeline_cancel"), {{QStringLiteral("pipeline"), pipeline}}, done, noReply);
}

void ServiceRunControl::resumePipeline(qint64 pipeline, Reply<qint64> done)
{
    ask<qint64>(QStringLiteral("pipeline_resume"), {{QStringLiteral("pipeline"), pipeline}}, done, pipelineIdOf);
}

void ServiceRunControl::removeMemoEntries(const QJsonObject& selector, Reply<QStringList> done)
{
    ask<QStringList>(QStringLiteral("memo_rm"), selector, done, [](const QJsonObject& r) -> Result<QStringList> {
        QStringList keys;
        for (const QJsonValue& k : r.value(QStringLiteral("removed")).toArray())
            keys << k.toString();
        return keys;
    });
}

void ServiceRunControl::deleteRun(RunId run, Reply<void> done)
{
    ask<void>(QStringLiteral("delete_run"), {{QStringLiteral("run"), run}}, done, noReply);
}

void ServiceRunControl::followConsole(RunId run, qint64 fromOffset)
{
    if (m_followed.contains(run))
        return;
    m_followed.insert(run, fromOffset);
    watchConsole(run, fromOffset);
}

void ServiceRunControl::watchConsole(RunId run, qint64 fromOffset)
{
    if (!m_client)
        return; // renewed on reconnection
    m_client->request(QStringLiteral("watch"),
            {{QStringLiteral("run"), run}, {QStringLiteral("console"), true}, {QStringLiteral("from"), fromOffset}},
            [run](const Result<QJsonObject>& r) {
                if (!r)
                    qCInfo(lcService).noquote() << "watching run" << run << "failed:" << r.error().message;
            });
}

void ServiceRunControl::answerPassphrase(qint64 prompt, const std::optional<QByteArray>& passphrase)
{
    if (m_client)
        m_client->answerPrompt(prompt, passphrase);
}

void ServiceRunControl::answerLoginQuestions(qint64 prompt, const std::optional<QList<QByteArray>>& answers)
{
    if (m_client)
        m_client->answerLoginPrompt(prompt, answers);
}

void ServiceRunControl::unfollowConsole(RunId run)
{
    if (!m_followed.remove(run) || !m_client)
        return;
    m_client->request(QStringLiteral("unwatch"), {{QStringLiteral("run"), run}}, [](const Result<QJsonObject>&) {});
}

} // namespace ty::service
