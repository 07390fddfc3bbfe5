#include "SshAgentFilter.h"

#include "core/nodes/NodesLog.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace ty {
namespace {

// draft-miller-ssh-agent, "Message numbers".
constexpr char kAgentFailure = 5;           // SSH_AGENT_FAILURE
constexpr char kRequestIdentities = 11;     // SSH2_AGENTC_REQUEST_IDENTITIES
constexpr char kIdentitiesAnswer = 12;      // SSH2_AGENT_IDENTITIES_ANSWER
constexpr quint32 kMaxMessage = 256 * 1024; // AGENT_MAX_LEN in OpenSSH; libssh refuses longer answers too

quint32 readU32(const char* p)
{
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return (quint32(u[0]) << 24) | (quint32(u[1]) << 16) | (quint32(u[2]) << 8) | quint32(u[3]);
}

void appendU32(QByteArray& out, quint32 v)
{
    const char bytes[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    out.append(bytes, 4);
}

// An SSH `string` at `pos` of `in` (uint32 length, bytes): its bytes, and
// `pos` moved past it. False when it runs past the end.
bool takeString(const QByteArray& in, qsizetype& pos, QByteArray* out)
{
    if (in.size() - pos < 4)
        return false;
    const quint32 len = readU32(in.constData() + pos);
    if (quint64(in.size() - pos - 4) < len)
        return false;
    *out = in.mid(pos + 4, qsizetype(len));
    pos += 4 + qsizetype(len);
    return true;
}

void closeFd(int& fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

// Waits until `fd` is ready for `events`; false when the stop pipe has a
// byte, or on a poll error.
bool waitFor(int fd, short events, int stopFd)
{
    for (;;) {
        pollfd fds[2] = {{fd, events, 0}, {stopFd, POLLIN, 0}};
        const int n = ::poll(fds, 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (fds[1].revents & (POLLIN | POLLERR | POLLHUP)))
            return false;
        if (fds[0].revents)
            return true; // ready, or an error/hang-up the next read or write reports
    }
}

// Reads exactly `n` bytes from the non-blocking socket `fd`. False on
// end-of-file, an error or a stop.
bool readFull(int fd, char* buf, size_t n, int stopFd)
{
    size_t done = 0;
    while (done < n) {
        const ssize_t r = ::recv(fd, buf + done, n - done, 0);
        if (r > 0) {
            done += size_t(r);
        } else if (r == 0) {
            return false;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!waitFor(fd, POLLIN, stopFd))
                return false;
        } else {
            return false;
        }
    }
    return true;
}

bool writeFull(int fd, const char* buf, size_t n, int stopFd)
{
    size_t done = 0;
    while (done < n) {
        const ssize_t w = ::send(fd, buf + done, n - done, MSG_NOSIGNAL);
        if (w >= 0) {
            done += size_t(w);
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!waitFor(fd, POLLOUT, stopFd))
                return false;
        } else {
            return false;
        }
    }
    return true;
}

// One message: its contents (type byte first) without the length prefix.
bool readMessage(int fd, QByteArray* message, int stopFd)
{
    char head[4];
    if (!readFull(fd, head, 4, stopFd))
        return false;
    const quint32 len = readU32(head);
    if (len > kMaxMessage)
        return false;
    message->resize(qsizetype(len));
    return readFull(fd, message->data(), len, stopFd);
}

bool writeMessage(int fd, const QByteArray& message, int stopFd)
{
    QByteArray framed;
    framed.reserve(message.size() + 4);
    appendU32(framed, quint32(message.size()));
    framed.append(message);
    return writeFull(fd, framed.constData(), size_t(framed.size()), stopFd);
}

bool setNonBlocking(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

} // namespace

std::optional<QByteArray> filterAgentIdentities(
        const QByteArray& answer, const QList<QByteArray>& allowed, int* listed, int* kept)
{
    if (answer.size() < 5 || answer.at(0) != kIdentitiesAnswer)
        return std::nullopt;
    const quint32 count = readU32(answer.constData() + 1);
    QByteArray entries;
    quint32 keptCount = 0;
    qsizetype pos = 5;
    for (quint32 i = 0; i < count; ++i) {
        const qsizetype start = pos;
        QByteArray blob, comment;
        if (!takeString(answer, pos, &blob) || !takeString(answer, pos, &comment))
            return std::nullopt;
        if (allowed.contains(blob)) {
            entries.append(answer.constData() + start, pos - start);
            ++keptCount;
        }
    }
    if (pos != answer.size())
        return std::nullopt; // a count that does not match the entries
    QByteArray out(1, kIdentitiesAnswer);
    appendU32(out, keptCount);
    out.append(entries);
    if (listed)
        *listed = int(count);
    if (kept)
        *kept = int(keptCount);
    return out;
}

SshAgentFilter::SshAgentFilter(
        QList<QByteArray> allowed, int own, int client, int upstream, int stopRead, int stopWrite)
    : m_allowed(std::move(allowed))
    , m_own(own)
    , m_client(client)
    , m_upstream(upstream)
    , m_stopRead(stopRead)
    , m_stopWrite(stopWrite)
{ }

Result<std::unique_ptr<SshAgentFilter>> SshAgentFilter::start(const QString& agentSocket, QList<QByteArray> allowed)
{
    const QByteArray path = QFile::encodeName(agentSocket);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.isEmpty() || size_t(path.size()) >= sizeof addr.sun_path)
        return fail(QStringLiteral("cannot use the ssh-agent socket '%1': not a socket path").arg(agentSocket));
    std::memcpy(addr.sun_path, path.constData(), size_t(path.size()));
    int upstream = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (upstream < 0 || ::connect(upstream, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0
            || !setNonBlocking(upstream)) {
        const QString why = QString::fromLocal8Bit(std::strerror(errno));
        closeFd(upstream);
        return fail(QStringLiteral("cannot reach ssh-agent at %1: %2").arg(agentSocket, why));
    }
    int pair[2] = {-1, -1};
    int stop[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0 || ::pipe2(stop, O_CLOEXEC | O_NONBLOCK) != 0
            || !setNonBlocking(pair[0])) {
        const QString why = QString::fromLocal8Bit(std::strerror(errno));
        for (int* fd : {&upstream, &pair[0], &pair[1], &stop[0], &stop[1]})
            closeFd(*fd);
        return fail(QStringLiteral("cannot set up a relay to ssh-agent: %1").arg(why));
    }
    std::unique_ptr<SshAgentFilter> filter(
            new SshAgentFilter(std::move(allowed), pair[0], pair[1], upstream, stop[0], stop[1]));
    try {
        filter->m_thread = std::thread([f = filter.get()] { f->relay(); });
    } catch (const std::system_error& e) {
        return fail(QStringLiteral("cannot start a relay to ssh-agent: %1").arg(QString::fromLocal8Bit(e.what())));
    }
    return filter;
}

SshAgentFilter::~SshAgentFilter()
{
    if (m_thread.joinable()) {
        const char byte = 0;
        while (::write(m_stopWrite, &byte, 1) < 0 && errno == EINTR) { }
        m_thread.join();
    }
    for (int* fd : {&m_own, &m_client, &m_upstream, &m_stopRead, &m_stopWrite})
        closeFd(*fd);
}

int SshAgentFilter::takeClientFd()
{
    return std::exchange(m_client, -1);
}

void SshAgentFilter::relay()
{
    QByteArray request;
    QByteArray answer;
    QString ended;
    while (readMessage(m_own, &request, m_stopRead)) { // false: libssh's end closed (or a stop)
        if (!writeMessage(m_upstream, request, m_stopRead) || !readMessage(m_upstream, &answer, m_stopRead)) {
            ended = QStringLiteral("the agent did not answer");
            break;
        }
        if (!request.isEmpty() && request.at(0) == kRequestIdentities && !answer.isEmpty()
                && answer.at(0) == kIdentitiesAnswer) {
            int listed = 0;
            int kept = 0;
            if (const auto filtered = filterAgentIdentities(answer, m_allowed, &listed, &kept)) {
                answer = *filtered;
                m_listed.store(listed);
                m_kept.store(kept);
            } else {
                answer = QByteArray(1, kAgentFailure);
                qCWarning(lcNodes) << "ssh-agent sent a malformed list of keys: none is offered";
            }
        }
        if (!writeMessage(m_own, answer, m_stopRead))
            break;
    }
    if (!ended.isEmpty())
        qCInfo(lcNodes).noquote() << "ssh-agent relay (IdentitiesOnly) ended:" << ended;
    // libssh may be waiting for an answer: end-of-file tells it the agent is
    // gone. Only our sending side: a request libssh still writes must not
    // fail with EPIPE, which would raise SIGPIPE (libssh writes with write()).
    ::shutdown(m_own, SHUT_WR);
}

} // namespace ty
