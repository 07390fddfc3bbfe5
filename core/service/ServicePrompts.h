#pragma once

#include "core/nodes/SshPassphraseProvider.h"

#include <QHash>
#include <QPointer>
#include <QString>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

class QObject;

namespace ty::service {

// The passphrase questions of trainyardd's SSH sessions, put to a client
// (PROTOCOL.md `prompt` event, `answer_prompt` op): a service has no
// terminal and no window, so the GUI's dialog or trainyardctl's terminal
// answers for it. Without a client that takes questions, the answer is
// "declined" at once, as in batch mode.
//
// Thread affinity: passphrase() is called on an SSH session's thread and
// waits there (kAnswerTimeoutMs at most); setAsker(), answer() and close()
// on the service's thread, where `context` lives and the asker runs. Made
// with std::make_shared (questions hold it weakly); close() it before
// `context` goes.
class ServicePrompts final : public SshPassphraseProvider, public std::enable_shared_from_this<ServicePrompts> {
public:
    static constexpr int kAnswerTimeoutMs = 120000;
    // Puts question `id` to a client; returns false when no client takes
    // questions (the question is then declined).
    using Asker = std::function<bool(qint64 id, const QString& node, const QString& prompt)>;

    explicit ServicePrompts(QObject* context);
    ~ServicePrompts() override;

    void setAsker(Asker asker);
    // The answer to question `id` (nullopt: declined); unknown ids are ignored.
    void answer(qint64 id, std::optional<QByteArray> passphrase);
    // Declines every open question and every later one (the service stops).
    void close();

    std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override;

private:
    struct Question {
        bool answered = false;
        std::optional<QByteArray> passphrase;
    };
    std::mutex m_mutex;
    std::condition_variable m_answered;
    QHash<qint64, std::shared_ptr<Question>> m_open;
    qint64 m_nextId = 1;
    bool m_closed = false;
    QObject* m_context; // the service's thread
    Asker m_asker;      // the service's thread only
};

} // namespace ty::service
