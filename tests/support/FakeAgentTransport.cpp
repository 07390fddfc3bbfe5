#include "FakeAgentTransport.h"

#include "core/agentproto/Protocol.h"
#include "trainyard/Version.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPointer>

namespace ty::test {

namespace {
Q_LOGGING_CATEGORY(lcFake, "trainyard.test.fakeagent", QtWarningMsg)

QByteArray line(const QJsonObject& o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
}
} // namespace

FakeAgentTransport::FakeAgentTransport(Clock& clock, QString name, QObject* parent)
    : AgentTransport(parent)
    , m_clock(clock)
    , m_name(std::move(name))
{
    // What a live agent answers without the test's help.
    setAutoReply(QStringLiteral("ping"), [this](const AgentRequest&) {
        return QJsonObject{{QStringLiteral("time_ms"), m_clock.nowMs()}};
    });
    setAutoReply(QStringLiteral("gpus"), [this](const AgentRequest&) {
        return QJsonObject{{QStringLiteral("gpus"), m_gpus}, {QStringLiteral("source"), QStringLiteral("none")}};
    });
    setAutoReply(QStringLiteral("listening_ports"), [](const AgentRequest&) { // revision 7: nothing listens
        return QJsonObject{{QStringLiteral("ports"), QJsonArray()}};
    });
    setAutoReply(QStringLiteral("list_files"), [this](const AgentRequest& r) {
        return QJsonObject{{QStringLiteral("workdir"), QStringLiteral("/fake/%1/work").arg(m_name)},
                {QStringLiteral("run_dir"), QStringLiteral("/fake/%1/runs/%2").arg(m_name, r.run)},
                {QStringLiteral("files"), QJsonArray()}, {QStringLiteral("truncated"), false}};
    });
    setAutoReply(QStringLiteral("untail"), [](const AgentRequest&) { return QJsonObject(); });
}

FakeAgentTransport::~FakeAgentTransport() = default;

void FakeAgentTransport::setOpenFailure(const QString& reason, ErrorKind kind)
{
    m_openFailure = reason;
    m_openFailureKind = kind;
}

void FakeAgentTransport::setAutoReply(const QString& op, AutoReply reply)
{
    if (reply)
        m_autoReplies.insert(op, std::move(reply));
    else
        m_autoReplies.remove(op);
}

void FakeAgentTransport::emitQueued(std::function<void()> fn)
{
    QMetaObject::invokeMethod(
            this,
            [this, connection = m_connection, fn = std::move(fn)] {
                if (connection == m_connection)
                    fn();
            },
            Qt::QueuedConnection);
}

void FakeAgentTransport::open()
{
    ++m_opens;
    m_openTimesMs.append(m_clock.nowMs());
    ++m_connection;
    m_decoder.reset();
    m_pending.clear();
    if (!m_openFailure.isEmpty()) {
        emitQueued([this, reason = m_openFailure, kind = m_openFailureKind] { Q_EMIT closed(reason, kind); });
        return;
    }
    m_open = true;
    emitQueued([this] {
        Q_EMIT opened();
        if (m_helloOnOpen)
            sendHello();
    });
}

void FakeAgentTransport::close()
{
    if (!m_open)
        return;
    m_open = false;
    ++m_connection;
    m_pending.clear();
    Q_EMIT closed(QStringLiteral("closed by the client"));
}

void FakeAgentTransport::drop(const QString& reason)
{
    if (!m_open)
        return;
    m_open = false;
    ++m_connection;
    m_pending.clear();
    Q_EMIT closed(reason);
}

void FakeAgentTransport::probe(std::function<void(std::optional<bool>)> done)
{
    ++m_probes;
    QMetaObject::invokeMethod(
            this, [done = std::move(done), answer = m_probeAnswer] { done(answer); }, Qt::QueuedConnection);
}

void FakeAgentTransport::write(const QByteArray& bytes)
{
    if (!m_open) {
        qCWarning(lcFake).noquote() << m_name << ": bytes written to a closed connection dropped";
        return;
    }
    m_decoder.feed(bytes);
    while (auto frame = m_decoder.next()) {
        AgentRequest r;
        r.id = quint64(frame->header.value(QStringLiteral("id")).toInteger());
        r.op = frame->header.value(QStringLiteral("op")).toString();
        r.run = frame->header.value(QStringLiteral("run")).toString();
        r.message = frame->header;
        r.atMs = m_clock.nowMs();
        r.connection = m_opens;
        if (r.id == 0 || r.op.isEmpty()) {
            m_protocolError = QStringLiteral("a request without id or op: %1")
                                      .arg(QString::fromUtf8(QJsonDocument(r.message).toJson(QJsonDocument::Compact)));
            continue;
        }
        handleRequest(r);
    }
    if (m_decoder.hasError() && m_protocolError.isEmpty())
        m_protocolError = m_decoder.error();
}

void FakeAgentTransport::handleRequest(const AgentRequest& request)
{
    m_requests.append(request);
    m_pending.append(request);
    const auto automatic = m_autoReplies.constFind(request.op);
    if (m_silent || automatic == m_autoReplies.cend())
        return;
    emitQueued([this, request, fn = automatic.value()] {
        // Answered by the test meanwhile: nothing more.
        const bool stillPending = std::any_of(
                m_pending.cbegin(), m_pending.cend(), [&](const AgentRequest& p) { return p.id == request.id; });
        if (stillPending && !m_silent)
            reply(request, fn(request));
    });
}

QList<AgentRequest> FakeAgentTransport::pending(const QString& op) const
{
    QList<AgentRequest> out;
    for (const AgentRequest& r : m_pending)
        if (op.isEmpty() || r.op == op)
            out.append(r);
    return out;
}

std::optional<AgentRequest> FakeAgentTransport::takePending(const QString& op)
{
    for (qsizetype i = 0; i < m_pending.size(); ++i)
        if (m_pending[i].op == op)
            return m_pending.takeAt(i);
    return std::nullopt;
}

int FakeAgentTransport::count(const QString& op) const
{
    return int(
            std::count_if(m_requests.cbegin(), m_requests.cend(), [&op](const AgentRequest& r) { return r.op == op; }));
}

void FakeAgentTransport::sendRaw(const QByteArray& bytes)
{
    if (!m_open) {
        qCWarning(lcFake).noquote() << m_name << ": frame to a closed connection dropped";
        return;
    }
    Q_EMIT received(bytes);
}

void FakeAgentTransport::sendFrame(QJsonObject header, const QByteArray& payload)
{
    if (!payload.isEmpty())
        header.insert(QStringLiteral("len"), qint64(payload.size()));
    sendRaw(line(header) + payload);
}

void FakeAgentTransport::sendHello()
{
    QJsonObject hello{{QStringLiteral("type"), QStringLiteral("hello")},
            {QStringLiteral("protocol"), agentproto::kProtocolVersion},
            {QStringLiteral("revision"), agentproto::kProtocolRevision},
            {QStringLiteral("agent"), QStringLiteral("trainyard-agent")},
            {QStringLiteral("version"), QStringLiteral(TRAINYARD_VERSION)}, {QStringLiteral("hostname"), m_name},
            {QStringLiteral("user"), QStringLiteral("tester")}, {QStringLiteral("pid"), 1000},
            {QStringLiteral("state_dir"), QStringLiteral("/fake/%1/state").arg(m_name)}, {QStringLiteral("cpus"), 8},
            {QStringLiteral("memory_mib"), 16384}};
    for (auto it = m_helloFields.constBegin(); it != m_helloFields.constEnd(); ++it)
        hello.insert(it.key(), it.value());
    sendFrame(hello);
}

void FakeAgentTransport::reply(const AgentRequest& request, const QJsonObject& fields)
{
    m_pending.removeIf([&request](const AgentRequest& p) { return p.id == request.id; });
    QJsonObject o = fields;
    o.insert(QStringLiteral("type"), QStringLiteral("reply"));
    o.insert(QStringLiteral("id"), qint64(request.id));
    o.insert(QStringLiteral("ok"), true);
    sendFrame(o);
}

void FakeAgentTransport::replyError(const AgentRequest& request, const QString& error, const QString& code)
{
    m_pending.removeIf([&request](const AgentRequest& p) { return p.id == request.id; });
    QJsonObject o{{QStringLiteral("type"), QStringLiteral("reply")}, {QStringLiteral("id"), qint64(request.id)},
            {QStringLiteral("ok"), false}, {QStringLiteral("error"), error}};
    if (!code.isEmpty())
        o.insert(QStringLiteral("code"), code);
    sendFrame(o);
}

void FakeAgentTransport::replyStart(const AgentRequest& start, qint64 startedMs, qint64 pid)
{
    const QString runDir = QStringLiteral("/fake/%1/state/runs/%2").arg(m_name, start.run);
    reply(start,
            QJsonObject{{QStringLiteral("pid"), pid}, {QStringLiteral("pgid"), pid},
                    {QStringLiteral("supervisor_pid"), pid - 1}, {QStringLiteral("run_dir"), runDir},
                    {QStringLiteral("console"), QString(runDir + QStringLiteral("/console.log"))},
                    {QStringLiteral("started_ms"), startedMs}});
}

void FakeAgentTransport::replyList(const AgentRequest& list, const QJsonArray& runs)
{
    reply(list, QJsonObject{{QStringLiteral("runs"), runs}});
}

void FakeAgentTransport::sendOutput(const QString& run, qint64 offset, const QByteArray& bytes,
        const QList<std::pair<qint64, qint64>>& stderrRanges)
{
    QJsonObject o{{QStringLiteral("type"), QStringLiteral("output")}, {QStringLiteral("run"), run},
            {QStringLiteral("offset"), offset}, {QStringLiteral("len"), qint64(bytes.size())}};
    if (!stderrRanges.isEmpty()) {
        QJsonArray ranges;
        for (const auto& [at, length] : stderrRanges)
            ranges.append(QJsonArray{at, length});
        o.insert(QStringLiteral("stderr"), ranges);
    }
    sendRaw(line(o) + bytes);
}

void FakeAgentTransport::sendEof(const QString& run, qint64 offset)
{
    sendFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("eof")}, {QStringLiteral("run"), run},
            {QStringLiteral("offset"), offset}});
}

void FakeAgentTransport::sendExited(const QJsonObject& status)
{
    QJsonObject o = status;
    o.insert(QStringLiteral("type"), QStringLiteral("exited"));
    sendFrame(o);
}

QJsonObject FakeAgentTransport::runStatus(
        const QString& run, qint64 startedMs, qint64 consoleSize, const std::optional<RunEnd>& end)
{
    QJsonObject o{{QStringLiteral("run"), run},
            {QStringLiteral("state"), end ? QStringLiteral("exited") : QStringLiteral("running")},
            {QStringLiteral("pid"), 4242}, {QStringLiteral("pgid"), 4242}, {QStringLiteral("started_ms"), startedMs},
            {QStringLiteral("console_size"), consoleSize}, {QStringLiteral("cancelled"), end && end->cancelled}};
    if (end) {
        o.insert(QStringLiteral("finished_ms"), end->finishedMs);
        if (end->exitCode)
            o.insert(QStringLiteral("exit_code"), *end->exitCode);
        if (end->signal)
            o.insert(QStringLiteral("signal"), *end->signal);
    }
    return o;
}

QJsonObject FakeAgentTransport::gpu(int index, const QString& name, double memoryTotalMib, double memoryUsedMib)
{
    return QJsonObject{{QStringLiteral("index"), index},
            {QStringLiteral("uuid"), QStringLiteral("GPU-fake-%1").arg(index)}, {QStringLiteral("name"), name},
            {QStringLiteral("pci_bus_id"), QStringLiteral("00000000:%1:00.0").arg(index + 1, 2, 16, QLatin1Char('0'))},
            {QStringLiteral("memory_total_mib"), memoryTotalMib}, {QStringLiteral("memory_used_mib"), memoryUsedMib},
            {QStringLiteral("utilization_pct"), 0}, {QStringLiteral("processes"), QJsonArray()},
            {QStringLiteral("claims"), QJsonArray()}};
}

} // namespace ty::test
