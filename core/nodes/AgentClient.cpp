#include "AgentClient.h"

#include "core/agentproto/ConsoleCompression.h"
#include "core/agentproto/Fields.h"

#include "core/nodes/AgentTransport.h"
#include "core/nodes/NodesLog.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QTimer>

#include <type_traits>

namespace ty {

namespace {

namespace fields = agentproto::fields;
namespace messages = agentproto::messages;
namespace ops = agentproto::ops;

QLatin1StringView key(const char* k)
{
    return QLatin1StringView(k);
}

// What fail() tells the callbacks of requests without a reply (replyLost()).
constexpr QLatin1StringView kReplyLost("connection to the agent lost before the reply to the ");

} // namespace

AgentClient::AgentClient(std::unique_ptr<AgentTransport> transport, QObject* parent)
    : QObject(parent)
    , m_transport(transport.release())
{
    m_transport->setParent(this);
    connect(m_transport, &AgentTransport::opened, this, &AgentClient::onOpened);
    connect(m_transport, &AgentTransport::received, this, &AgentClient::onReceived);
    connect(m_transport, &AgentTransport::closed, this, &AgentClient::onClosed);
    connect(m_transport, &AgentTransport::warning, this, &AgentClient::warning);
}

AgentClient::~AgentClient()
{
    m_transport->disconnect(this);
}

QString AgentClient::nodeName() const
{
    return m_nodeName.isEmpty() ? m_transport->describe() : m_nodeName;
}

void AgentClient::connectToAgent()
{
    if (m_state == State::Connecting || m_state == State::Ready)
        return;
    m_decoder.reset();
    m_hello = {};
    m_preamble.clear();
    m_preambleDone = false;
    m_state = State::Connecting;
    m_transport->open();
}

void AgentClient::disconnectFromAgent(const QString& reason)
{
    if (m_state == State::Idle || m_state == State::Disconnected)
        return;
    fail(reason);
}

void AgentClient::onOpened()
{
    // Nothing to send: the agent speaks first (hello).
}

void AgentClient::onReceived(const QByteArray& bytes)
{
    if (m_state != State::Connecting && m_state != State::Ready)
        return;
    if (!m_preambleDone) {
        if (!skipPreamble(bytes))
            return;
    } else {
        m_decoder.feed(bytes);
    }
    while (m_state == State::Connecting || m_state == State::Ready) {
        auto frame = m_decoder.next();
        if (!frame)
            break;
        handleFrame(*frame);
    }
    if (m_decoder.hasError() && (m_state == State::Connecting || m_state == State::Ready))
        fail(QStringLiteral("agent on node %1: %2").arg(nodeName(), m_decoder.error()));
}

bool AgentClient::skipPreamble(const QByteArray& bytes)
{
    // The agent is started by the user's shell on the node, and a startup
    // file that prints (`echo Welcome` in ~/.bashrc, which bash reads for
    // an SSH command too) puts its text before the agent's hello. A line
    // that starts with '{' is the agent's (the decoder judges it); so is the
    // rest of a line from a '{' that begins a hello (output without a final
    // newline). Lines before that are skipped, and logged.
    constexpr qsizetype kMaxPreamble = 64 * 1024;
    m_preamble.append(bytes);
    qsizetype start = 0;
    qsizetype agentAt = -1;
    for (qsizetype nl; agentAt < 0 && (nl = m_preamble.indexOf('\n', start)) >= 0; start = nl + 1) {
        const QByteArrayView line = QByteArrayView(m_preamble).sliced(start, nl - start);
        if (line.startsWith('{')) {
            agentAt = start;
            break;
        }
        for (qsizetype brace = line.indexOf('{'); brace >= 0 && agentAt < 0; brace = line.indexOf('{', brace + 1)) {
            const QJsonObject o = QJsonDocument::fromJson(line.sliced(brace).toByteArray()).object();
            if (o.value(key(fields::kType)).toString() == QLatin1StringView(messages::kHello))
                agentAt = start + brace;
        }
    }
    if (agentAt < 0) {
        if (m_preamble.size() > kMaxPreamble)
            fail(QStringLiteral(
                    "agent on node %1: no agent in the first 64 KiB of output; the node's shell printed: %2 "
                    "(a shell startup file such as ~/.bashrc writes to stdout)")
                            .arg(nodeName(), QString::fromUtf8(m_preamble.left(200)).simplified()));
        return false;
    }
    if (agentAt > 0)
        qCWarning(lcNodes).noquote()
                << "node" << nodeName() << ": skipped" << agentAt
                << "bytes the shell printed before the agent started (a startup file such as "
                   "~/.bashrc writes to stdout):"
                << QString::fromUtf8(m_preamble.left(std::min<qsizetype>(agentAt, 200))).simplified();
    m_preambleDone = true;
    m_decoder.feed(std::exchange(m_preamble, QByteArray()).sliced(agentAt));
    return true;
}

void AgentClient::onClosed(const QString& reason, ErrorKind kind)
{
    if (m_state == State::Connecting || m_state == State::Ready)
        fail(reason, kind);
}

void AgentClient::handleFrame(const AgentFrame& frame)
{
    const QJsonObject& h = frame.header;
    const QString type = h.value(key(fields::kType)).toString();
    if (m_state == State::Connecting) {
        auto hello = agentHelloFromJson(h);
        if (!hello) {
            fail(QStringLiteral("agent on node %1: %2").arg(nodeName(), hello.error().message));
            return;
        }
        if (hello->protocol != kAgentProtocolVersion) {
            fail(QStringLiteral("agent on node %1 speaks protocol %2, this Trainyard speaks protocol %3")
                            .arg(nodeName())
                            .arg(hello->protocol)
                            .arg(kAgentProtocolVersion));
            return;
        }
        m_hello = *hello;
        m_state = State::Ready;
        const QList<QByteArray> queued = std::exchange(m_queued, {});
        for (const QByteArray& line : queued)
            m_transport->write(line);
        Q_EMIT ready(m_hello);
        return;
    }
    if (type == QLatin1StringView(messages::kOutput)) {
        const qint64 offset = h.value(key(fields::kOffset)).toInteger();
        // Revision 2: [[offset, length], ...] of stderr bytes in this frame.
        // Entries outside the frame or malformed are dropped, not trusted.
        ByteRanges stderrRanges;
        const qint64 end = offset + frame.payload.size();
        for (const QJsonValue& v : h.value(key(fields::kStderr)).toArray()) {
            const QJsonArray pair = v.toArray();
            const qint64 b = pair.at(0).toInteger(-1);
            const qint64 len = pair.at(1).toInteger(-1);
            if (pair.size() == 2 && b >= offset && len > 0 && b + len <= end)
                stderrRanges.append(ByteRange{b, len});
        }
        Q_EMIT output(h.value(key(fields::kRun)).toString(), offset, frame.payload, stderrRanges);
    } else if (type == QLatin1StringView(messages::kReply)) {
        const quint64 id = quint64(h.value(key(fields::kId)).toInteger());
        auto it = m_pending.find(id);
        if (it == m_pending.end()) {
            qCWarning(lcNodes) << "agent on node" << nodeName() << "replied to unknown request id" << id;
            return;
        }
        Pending p = std::move(it.value());
        m_pending.erase(it);
        if (!p.callback)
            return;
        if (h.value(key(fields::kOk)).toBool())
            p.callback(h);
        else
            p.callback(ty::fail(QStringLiteral("node %1: %2").arg(nodeName(), h.value(key(fields::kError)).toString()),
                    h.value(key(fields::kCode)).toString() == QLatin1StringView(agentproto::kCodeGpuClaimed)
                            ? ErrorKind::GpuClaimed
                            : ErrorKind::Refused));
    } else if (type == QLatin1StringView(messages::kEof)) {
        Q_EMIT tailEnded(h.value(key(fields::kRun)).toString(), h.value(key(fields::kOffset)).toInteger());
    } else if (type == QLatin1StringView(messages::kTruncated)) {
        Q_EMIT consoleTruncated(h.value(key(fields::kRun)).toString(), h.value(key(fields::kOffset)).toInteger(),
                h.value(key(fields::kSize)).toInteger(), h.value(key(fields::kGeneration)).toInteger(-1));
    } else if (type == QLatin1StringView(messages::kExited)) {
        AgentRunStatus s = agentRunStatusFromJson(h);
        s.running = false;
        Q_EMIT runExited(s);
    } else if (type == u"slurm") {
        Q_EMIT slurmChanged(agentRunStatusFromJson(h));
    } else if (type == QLatin1StringView(messages::kError)) {
        fail(QStringLiteral("agent on node %1 reported: %2").arg(nodeName(), h.value(key(fields::kError)).toString()));
    } else {
        qCWarning(lcNodes) << "agent on node" << nodeName() << "sent an unknown message type" << type;
    }
}

void AgentClient::fail(const QString& reason, ErrorKind kind)
{
    if (m_state == State::Disconnected)
        return;
    m_state = State::Disconnected;
    m_queued.clear();
    m_transport->close();
    const QHash<quint64, Pending> pending = std::exchange(m_pending, {});
    QPointer<AgentClient> self(this);
    for (auto it = pending.cbegin(); it != pending.cend(); ++it) {
        if (!it->callback)
            continue;
        const QString what = it->run.isEmpty() ? QStringLiteral("%1 request").arg(it->op)
                                               : QStringLiteral("%1 request for run %2").arg(it->op, it->run);
        it->callback(ty::fail(
                QStringLiteral("node %1: %2%3: %4").arg(nodeName(), kReplyLost, what, reason), ErrorKind::ReplyLost));
        if (!self)
            return;
    }
    Q_EMIT disconnected(reason, kind);
}

bool AgentClient::replyLost(const Error& error)
{
    return error.kind == ErrorKind::ReplyLost;
}

void AgentClient::deliverLater(ReplyCallback cb, Result<QJsonObject> result)
{
    if (!cb)
        return;
    QTimer::singleShot(0, this, [cb = std::move(cb), r = std::move(result)] { cb(r); });
}

void AgentClient::send(const QJsonObject& message)
{
    QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact);
    line.append('\n');
    if (m_state == State::Ready)
        m_transport->write(line);
    else
        m_queued.append(line);
}

quint64 AgentClient::request(const QString& op, QJsonObject args, ReplyCallback onReply)
{
    const quint64 id = m_nextId++;
    if (m_state != State::Ready && m_state != State::Connecting) {
        deliverLater(std::move(onReply),
                ty::fail(QStringLiteral("node %1: not connected to the agent (%2 request)").arg(nodeName(), op)));
        return id;
    }
    args.insert(key(fields::kId), qint64(id));
    args.insert(key(fields::kOp), op);
    m_pending.insert(id, Pending{op, args.value(key(fields::kRun)).toString(), std::move(onReply)});
    send(args);
    return id;
}

namespace {
// A typed reply: the caller's callback gets the agent's error as is, or
// `decode` applied to the reply object.
template <typename T, typename Decode>
AgentClient::ReplyCallback typedReply(std::function<void(const Result<T>&)> cb, Decode decode)
{
    return [cb = std::move(cb), decode = std::move(decode)](const Result<QJsonObject>& r) {
        if (!cb)
            return;
        if (!r)
            cb(std::unexpected(r.error()));
        else if constexpr (std::is_void_v<T>)
            cb({});
        else
            cb(decode(*r));
    };
}
constexpr auto kNoPayload = [](const QJsonObject&) {};
} // namespace

quint64 AgentClient::ping(std::function<void(const Result<qint64>&)> cb)
{
    return request(QLatin1StringView(ops::kPing), {},
            typedReply(std::move(cb), [](const QJsonObject& o) { return o.value(key(fields::kTimeMs)).toInteger(); }));
}

quint64 AgentClient::start(const AgentStartRequest& req, std::function<void(const Result<AgentStartReply>&)> cb)
{
    return request(QLatin1StringView(ops::kStart), agentStartRequestToJson(req),
            typedReply(std::move(cb), agentStartReplyFromJson));
}

quint64 AgentClient::startArray(const AgentArrayRequest& req, std::function<void(const Result<AgentArrayReply>&)> cb)
{
    return request(QLatin1StringView(ops::kStartArray), agentArrayRequestToJson(req),
            typedReply(std::move(cb), agentArrayReplyFromJson));
}

quint64 AgentClient::tail(const QString& run, qint64 offset, bool follow, std::function<void(const Result<qint64>&)> cb,
        bool followTruncation, qint64 generation)
{
    QJsonObject args{{key(fields::kRun), run}, {key(fields::kOffset), offset}, {key(fields::kFollow), follow}};
    if (followTruncation)
        args.insert(key(fields::kFollowTruncation), true);
    if (followTruncation && generation >= 0)
        args.insert(key(fields::kGeneration), generation);
    // Revision 8; an older agent ignores it and sends the bytes as they are.
    if (m_transport->compressConsole())
        args.insert(key(fields::kCompress), QLatin1StringView(agentproto::kCompressLz4));
    return request(QLatin1StringView(ops::kTail), args,
            typedReply(std::move(cb), [](const QJsonObject& o) { return o.value(key(fields::kSize)).toInteger(); }));
}

quint64 AgentClient::untail(const QString& run, std::function<void(const Result<void>&)> cb)
{
    return request(QLatin1StringView(ops::kUntail), QJsonObject{{key(fields::kRun), run}},
            typedReply(std::move(cb), kNoPayload));
}

quint64 AgentClient::cancel(
        const QString& run, int graceMs, std::function<void(const Result<void>&)> cb, const QString& signal)
{
    QJsonObject args{{key(fields::kRun), run}, {key(fields::kGraceMs), graceMs}};
    if (!signal.isEmpty())
        args.insert(key(fields::kSignal), signal);
    return request(QLatin1StringView(ops::kCancel), args, typedReply(std::move(cb), kNoPayload));
}

quint64 AgentClient::slurmInfo(std::function<void(const Result<QJsonObject>&)> cb)
{
    return request(QStringLiteral("slurm_info"), {}, typedReply(std::move(cb), [](const QJsonObject& o) {
        QJsonObject out = o;
        out.remove(key(fields::kType));
        out.remove(key(fields::kId));
        out.remove(key(fields::kOk));
        return out;
    }));
}

quint64 AgentClient::list(std::function<void(const Result<QList<AgentRunStatus>>&)> cb)
{
    return request(QLatin1StringView(ops::kList), {}, typedReply(std::move(cb), [](const QJsonObject& o) {
        QList<AgentRunStatus> runs;
        const QJsonArray a = o.value(key(fields::kRuns)).toArray();
        for (const QJsonValue& v : a)
            runs.append(agentRunStatusFromJson(v.toObject()));
        return runs;
    }));
}

quint64 AgentClient::status(const QString& run, std::function<void(const Result<AgentRunStatus>&)> cb)
{
    return request(QLatin1StringView(ops::kStatus), QJsonObject{{key(fields::kRun), run}},
            typedReply(std::move(cb), agentRunStatusFromJson));
}

quint64 AgentClient::readFile(const QString& run, const QString& root, const QString& path, qint64 offset,
        qint64 maxBytes, std::function<void(const Result<AgentFileChunk>&)> cb)
{
    QJsonObject args{{key(fields::kRun), run}, {key(fields::kRoot), root}, {key(fields::kPath), path},
            {key(fields::kOffset), offset}, {key(fields::kMax), maxBytes}};
    return request(
            QLatin1StringView(ops::kReadFile), std::move(args), typedReply(std::move(cb), agentFileChunkFromJson));
}

quint64 AgentClient::gpus(std::function<void(const Result<QList<AgentGpu>>&)> cb)
{
    return request(QLatin1StringView(ops::kGpus), {}, typedReply(std::move(cb), [](const QJsonObject& o) {
        return agentGpusFromJson(o.value(key(fields::kGpus)).toArray());
    }));
}

quint64 AgentClient::listeningPorts(std::function<void(const Result<QList<int>>&)> cb)
{
    return request(QLatin1StringView(ops::kListeningPorts), {}, typedReply(std::move(cb), [](const QJsonObject& o) {
        QList<int> ports;
        for (const QJsonValue& v : o.value(key(fields::kPorts)).toArray())
            if (const int p = v.toInt(0); p > 0 && p <= 65535)
                ports.append(p);
        return ports;
    }));
}

quint64 AgentClient::listFiles(
        const QString& run, const QStringList& globs, std::function<void(const Result<AgentFileList>&)> cb)
{
    QJsonObject args{{key(fields::kRun), run}, {key(fields::kGlobs), QJsonArray::fromStringList(globs)}};
    return request(QLatin1StringView(ops::kListFiles), std::move(args),
            typedReply(std::move(cb), [](const QJsonObject& o) { return agentFileListFromJson(o); }));
}

void AgentClient::runFileJob(NodeFileJob job, std::function<void(const Result<void>&)> done)
{
    m_transport->runFileJob(std::move(job), std::move(done));
}

QString AgentClient::rejectedHostKeyFingerprint() const
{
    return m_transport->rejectedHostKeyFingerprint();
}

bool AgentClient::trustNewHostKey()
{
    return m_transport->trustNewHostKey();
}

void AgentClient::probe(std::function<void(std::optional<bool>)> done)
{
    m_transport->probe(std::move(done));
}

} // namespace ty
