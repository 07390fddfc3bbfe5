#pragma once

// Runs `<agentPath> --stdio [--state-dir DIR]` as a child process and talks to
// it through its stdin/stdout. The agent's stderr lines are logged as
// warnings in the "trainyard.nodes" category. close() closes the agent's
// stdin (the agent then exits; its runs go on) and kills it if it has not
// exited within 3 s. GUI thread (or any one thread with an event loop).

#include "core/nodes/AgentTransport.h"

#include <QProcess>
#include <QProcessEnvironment>

namespace ty {

class LocalAgentTransport final : public AgentTransport {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LocalAgentTransport)
public:
    // Empty stateDir: the agent's default (~/.local/state/trainyard-agent).
    explicit LocalAgentTransport(QString agentPath, QString stateDir = {}, QObject* parent = nullptr);
    ~LocalAgentTransport() override;

    // Environment of the agent process (default: this process's).
    void setProcessEnvironment(const QProcessEnvironment& env);

    void open() override;
    void write(const QByteArray& bytes) override;
    void close() override;
    QString describe() const override;
    // False unless set: a pipe to a child carries bytes for free, so
    // compressing them would only cost CPU. Tests set it to check the
    // agent's side of LZ4 console frames without an SSH server.
    bool compressConsole() const override { return m_compressConsole; }
    void setCompressConsole(bool on) { m_compressConsole = on; }

    // The agent's pid while it runs, else 0.
    qint64 processId() const;

private:
    void emitClosed(const QString& reason);
    void logStderr(bool flushAll);

    QString m_agentPath;
    QString m_stateDir;
    QProcess* m_process = nullptr;
    QByteArray m_stderrBuf;
    bool m_closedEmitted = false;
    bool m_closing = false;
    bool m_compressConsole = false;
};

} // namespace ty
