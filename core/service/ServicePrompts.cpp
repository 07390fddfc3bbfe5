#include "ServicePrompts.h"

#include <QObject>
#include <QThread>

#include <chrono>

namespace ty::service {

namespace {

void wipe(std::optional<QList<QByteArray>>& answers)
{
    if (answers)
        for (QByteArray& a : *answers)
            a.fill('\0');
    answers.reset();
}

} // namespace

ServicePrompts::ServicePrompts(QObject* context)
    : m_context(context)
{ }

ServicePrompts::~ServicePrompts()
{
    close();
}

void ServicePrompts::setAsker(Asker asker)
{
    m_asker = std::move(asker);
}

void ServicePrompts::setLoginAsker(LoginAsker asker)
{
    m_loginAsker = std::move(asker);
}

void ServicePrompts::answer(qint64 id, std::optional<QByteArray> passphrase)
{
    std::optional<QList<QByteArray>> answers;
    if (passphrase)
        answers = QList<QByteArray>{std::move(*passphrase)};
    answerLogin(id, std::move(answers));
}

void ServicePrompts::answerLogin(qint64 id, std::optional<QList<QByteArray>> answers)
{
    std::lock_guard lock(m_mutex);
    const auto q = m_open.value(id);
    if (!q || q->answered) {
        wipe(answers);
        return;
    }
    q->answered = true;
    if (answers && answers->size() == q->expected)
        q->answers = std::move(answers);
    else
        wipe(answers); // the wrong count: declined
    m_answered.notify_all();
}

void ServicePrompts::close()
{
    std::lock_guard lock(m_mutex);
    m_closed = true;
    for (const auto& q : std::as_const(m_open))
        q->answered = true; // declined
    m_answered.notify_all();
}

std::optional<QList<QByteArray>> ServicePrompts::ask(
        qsizetype expected, std::function<bool(ServicePrompts&, qint64 id)> put)
{
    // Never wait on the service's own thread: it is the one that asks.
    if (QThread::currentThread() == m_context->thread())
        return std::nullopt;
    auto q = std::make_shared<Question>();
    q->expected = expected;
    qint64 id = 0;
    {
        std::lock_guard lock(m_mutex);
        if (m_closed)
            return std::nullopt;
        id = m_nextId++;
        m_open.insert(id, q);
        // Queued, never blocking: the service's thread may be waiting for
        // this session meanwhile (a shutdown); the wait below then ends by
        // close() or the timeout.
        QMetaObject::invokeMethod(
                m_context,
                [weak = weak_from_this(), id, put = std::move(put)] {
                    const auto self = weak.lock();
                    if (self && !put(*self, id))
                        self->answerLogin(id, std::nullopt);
                },
                Qt::QueuedConnection);
    }
    std::unique_lock lock(m_mutex);
    m_answered.wait_for(lock, std::chrono::milliseconds(kAnswerTimeoutMs), [&q] { return q->answered; });
    m_open.remove(id);
    std::optional<QList<QByteArray>> out = std::move(q->answers);
    q->answers.reset();
    return out;
}

std::optional<QByteArray> ServicePrompts::passphrase(const QString& node, const QString& prompt)
{
    auto answers = ask(1,
            [node, prompt](ServicePrompts& self, qint64 id) { return self.m_asker && self.m_asker(id, node, prompt); });
    if (!answers)
        return std::nullopt;
    QByteArray out = std::move(answers->first());
    wipe(answers);
    return out;
}

std::optional<QList<QByteArray>> ServicePrompts::answers(const QString& node, const SshLoginQuestions& questions)
{
    if (questions.prompts.isEmpty())
        return QList<QByteArray>{};
    return ask(questions.prompts.size(), [node, questions](ServicePrompts& self, qint64 id) {
        return self.m_loginAsker && self.m_loginAsker(id, node, questions);
    });
}

} // namespace ty::service
