#pragma once

#include "RunControl.h"

#include <QPointer>

#include <memory>

namespace ty {

class ResultStore;
class RunEngine;
class SshPassphraseProvider;

// RunControl over a RunEngine in this process, on its own thread or this
// one: each call runs on the engine's thread and its answer is posted back;
// the engine's signals are passed on, queued. Used where no service serves
// the database: tests of a single view, and a view given an engine directly.
//
// `store` is the engine's (addNode writes the node there); `agentPath` and
// `passphrases` build a new node's transport (core/nodes/NodeTransports.h).
// The engine and the store must outlive this object. followConsole() does
// nothing: an engine that ingests emits every run's console.
class LocalRunControl final : public RunControl {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LocalRunControl)

public:
    LocalRunControl(RunEngine* engine, ResultStore* store, QString agentPath = {},
            std::shared_ptr<SshPassphraseProvider> passphrases = {}, QObject* parent = nullptr);
    ~LocalRunControl() override;

    RunEngine* engine() const { return m_engine; }

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
    void followConsole(RunId, qint64) override { }
    void unfollowConsole(RunId) override { }
    // Never asked: the engine's sessions ask `passphrases` themselves.
    void answerPassphrase(qint64, const std::optional<QByteArray>&) override { }
    void answerLoginQuestions(qint64, const std::optional<QList<QByteArray>>&) override { }
    // Pipelines run only in trainyardd: each answers InvalidInput, saying so.
    void submitPipeline(const QJsonObject& spec, const QString& node, Reply<qint64> done) override;
    void cancelPipeline(qint64 pipeline, Reply<void> done) override;
    void resumePipeline(qint64 pipeline, Reply<qint64> done) override;
    void removeMemoEntries(const QJsonObject& selector, Reply<QStringList> done) override;

private:
    // Runs `work` on the engine's thread; what it hands to its `answer` is
    // posted to `done` on this object's thread.
    template <typename T>
    void onEngine(std::function<void(RunEngine&, std::function<void(Result<T>)>)> work, Reply<T> done);

    QPointer<RunEngine> m_engine;
    ResultStore* m_store;
    QString m_agentPath;
    std::shared_ptr<SshPassphraseProvider> m_passphrases;
};

} // namespace ty
