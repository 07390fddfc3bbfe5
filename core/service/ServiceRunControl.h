#pragma once

#include "core/runs/RunControl.h"

#include <QHash>

#include <memory>

class QTimer;

namespace ty::service {

class ServiceClient;

// RunControl through trainyardd (PROTOCOL.md): how the GUI reaches the engine.
// It subscribes to every run's state and metric points, to the nodes' status
// and GPUs and to the service's passphrase questions (passphraseRequested),
// and watches the console of each followed run.
//
// When the service goes away (killed, replaced by a newer version) it is
// started again and reconnected to after 0.25 s, then after doubling delays
// up to 5 s; the subscriptions and console watches are renewed from the last
// byte received, and reconnected() says so. Meanwhile calls fail at once
// with ErrorKind::Unreachable, and connectedToService() is false.
//
// Thread affinity: the creating thread; connecting blocks it (the service's
// start, at most `timeoutMs`), everything after does not.
class ServiceRunControl final : public RunControl {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ServiceRunControl)

public:
    // Connects to the service of `databasePath`, starting it when none runs.
    // Errors: ServiceClient::connectTo's (the service cannot start, refuses
    // this user, speaks a newer protocol).
    static Result<std::unique_ptr<ServiceRunControl>> connectTo(const QString& databasePath, int timeoutMs = 20000);
    ~ServiceRunControl() override;

    bool connectedToService() const;
    qint64 servicePid() const;

    void submit(const JobSpec& spec, const QString& node, Reply<QList<RunId>> done) override;
    void cancel(const QList<RunId>& runs, int graceMs = 10000) override;
    void queue(RunId run, QueueAction action, int priority, Reply<void> done) override;
    void listArtifacts(RunId run, Reply<AgentFileList> done) override;
    void downloadArtifacts(RunId run, const QString& destDir, Reply<ArtifactDownload> done) override;
    void addNode(const NodeRecord& node, bool acceptNewHostKey, Reply<void> done) override;
    void rejectedHostKey(const QString& node, Reply<QString> done) override;
    void trustHostKey(const QString& node, Reply<bool> done) override;
    void annotate(RunId run, const RunAnnotation& a, Reply<void> done) override;
    void deleteRun(RunId run, Reply<void> done) override;
    void followConsole(RunId run, qint64 fromOffset) override;
    void unfollowConsole(RunId run) override;
    void answerPassphrase(qint64 prompt, const std::optional<QByteArray>& passphrase) override;
    void answerLoginQuestions(qint64 prompt, const std::optional<QList<QByteArray>>& answers) override;
    void submitPipeline(const QJsonObject& spec, const QString& node, Reply<qint64> done) override;
    void cancelPipeline(qint64 pipeline, Reply<void> done) override;
    void resumePipeline(qint64 pipeline, Reply<qint64> done) override;
    void removeMemoEntries(const QJsonObject& selector, Reply<QStringList> done) override;

private:
    explicit ServiceRunControl(QString databasePath);
    void attach(std::unique_ptr<ServiceClient> client);
    void watchConsole(RunId run, qint64 fromOffset);
    void onDisconnected();
    void reconnect();
    // One request whose reply `take` turns into the caller's answer.
    template <typename T>
    void ask(const QString& op, QJsonObject args, Reply<T> done, std::function<Result<T>(const QJsonObject&)> take);

    QString m_databasePath;
    std::unique_ptr<ServiceClient> m_client;
    QHash<RunId, qint64> m_followed; // run -> end of the console received so far
    QTimer* m_reconnectTimer = nullptr;
    int m_reconnectDelayMs = 250;
};

} // namespace ty::service
