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

// The questions of trainyardd's SSH sessions, put to a client (PROTOCOL.md
// `prompt` event, `answer_prompt` op): a key's passphrase, and the rounds of
// a keyboard-interactive login (one-time codes). A service has no terminal
// and no window, so the GUI's dialog or trainyardctl's terminal answers for
// it. Without a client that takes questions, the answer is "declined" at
// once, as in batch mode.
//
// Thread affinity: passphrase() and answers() are called on an SSH session's
// thread and wait there (kAnswerTimeoutMs at most); setAsker(),
// setLoginAsker(), answer(), answerLogin() and close() on the service's
// thread, where `context` lives and the askers run. Made with
// std::make_shared (questions hold it weakly); close() it before `context`
// goes. Answers are handed to the session and not kept here.
class ServicePrompts final : public SshPassphraseProvider, public std::enable_shared_from_this<ServicePrompts> {
public:
    static constexpr int kAnswerTimeoutMs = 120000;
    // Puts question `id` to a client; returns false when no client takes
    // questions (the question is then declined).
    using Asker = std::function<bool(qint64 id, const QString& node, const QString& prompt)>;
    using LoginAsker = std::function<bool(qint64 id, const QString& node, const SshLoginQuestions& questions)>;

    explicit ServicePrompts(QObject* context);
    ~ServicePrompts() override;

    void setAsker(Asker asker);           // passphrases
    void setLoginAsker(LoginAsker asker); // keyboard-interactive rounds
    // The answer to question `id` (nullopt: declined); unknown ids are
    // ignored. A passphrase also answers a login question of one prompt
    // (what a client that knows only passphrase questions sends).
    void answer(qint64 id, std::optional<QByteArray> passphrase);
    // The answers to question `id`, one per prompt (nullopt, or another
    // count than the question's prompts: declined); a passphrase question
    // takes a list of one.
    void answerLogin(qint64 id, std::optional<QList<QByteArray>> answers);
    // Declines every open question and every later one (the service stops).
    void close();

    std::optional<QByteArray> passphrase(const QString& node, const QString& prompt) override;
    std::optional<QList<QByteArray>> answers(const QString& node, const SshLoginQuestions& questions) override;

private:
    struct Question {
        qsizetype expected = 1; // answers wanted (a passphrase: one)
        bool answered = false;
        std::optional<QList<QByteArray>> answers;
    };
    // Registers a question of `expected` answers, has `put` ask it on the
    // service's thread (false: nobody to ask), and waits for its answers.
    std::optional<QList<QByteArray>> ask(qsizetype expected, std::function<bool(ServicePrompts&, qint64 id)> put);

    std::mutex m_mutex;
    std::condition_variable m_answered;
    QHash<qint64, std::shared_ptr<Question>> m_open;
    qint64 m_nextId = 1;
    bool m_closed = false;
    QObject* m_context;      // the service's thread
    Asker m_asker;           // the service's thread only
    LoginAsker m_loginAsker; // the service's thread only
};

} // namespace ty::service
