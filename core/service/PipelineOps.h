#pragma once

#include <QJsonObject>
#include <QString>

#include <functional>
#include <optional>

namespace ty {
class ResultStore;
}

namespace ty::pipeline {
class PipelineRunner;
}

namespace ty::service {

// The service's pipeline requests (PROTOCOL.md: pipeline_submit, pipeline_resume,
// pipeline_cancel, pipelines, memo_rm), answered from the PipelineRunner and
// the memoization entries of the result database (core/memo MemoStore). Kept out of
// ServiceServer, which only routes them here. Thread: the engine's.
class PipelineOps {
public:
    struct Answer {
        QJsonObject body;  // the reply's fields when ok
        QString errorKind; // non-empty: the request failed (invalid_input, no_such_pipeline, ...)
        QString error;
    };

    // `connectNode` is called with a node a request names before it is used.
    PipelineOps(
            pipeline::PipelineRunner* runner, ResultStore* store, std::function<void(const QString& node)> connectNode);

    // The answer to a pipeline request; nullopt for any other op.
    std::optional<Answer> handle(const QString& op, const QJsonObject& request);

private:
    Answer submit(const QJsonObject& request);
    Answer cancel(const QJsonObject& request);
    Answer resume(const QJsonObject& request);
    Answer list(const QJsonObject& request);
    Answer removeMemo(const QJsonObject& request);

    pipeline::PipelineRunner* m_runner;
    ResultStore* m_store;
    std::function<void(const QString&)> m_connectNode;
};

} // namespace ty::service
