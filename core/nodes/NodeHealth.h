#pragma once

// Application-level heartbeats on an agent connection: libssh 0.10 has no
// ServerAlive and its non-blocking keepalive drops every other call
// (LIBSSH-NOTES.md), and a link behind a ProxyCommand has no TCP keepalive.
//
// While the client is ready, a `ping` goes out every interval (default 5 s).
// Any reply or console output counts as a sign of life. When none came for
// `timeout` (default 15 s) the node is declared unreachable: unreachable() is
// emitted and, with disconnectOnTimeout (default), the client is
// disconnected, so its owner (RunEngine) reconnects with backoff; runs on the
// node are not affected (they are detached there). A slow but working link
// (replies after several seconds) is not a failure as long as something
// arrives within the timeout.
//
// Time: `clock` (core/common/Clock.h; default the system clock) gives the
// monotonic time the silence is measured in and the timer that checks it.
//
// Thread affinity: the client's thread.

#include <QObject>
#include <QPointer>

namespace ty {

class AgentClient;
class Clock;
class ClockTimer;

class NodeHealth final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(NodeHealth)
public:
    explicit NodeHealth(AgentClient* client, QObject* parent = nullptr);
    // `clock` must outlive this object.
    NodeHealth(AgentClient* client, Clock& clock, QObject* parent = nullptr);
    ~NodeHealth() override;

    void setInterval(int ms); // between pings, default 5000
    void setTimeout(int ms);  // silence that means unreachable, default 15000
    void setDisconnectOnTimeout(bool on) { m_disconnectOnTimeout = on; }
    int interval() const { return m_intervalMs; }
    int timeout() const { return m_timeoutMs; }

    // Whether the client is ready and the last sign of life is within the timeout.
    bool isReachable() const;
    // Round trip of the last answered ping, ms (-1 before the first).
    qint64 lastRoundTripMs() const { return m_lastRttMs; }

Q_SIGNALS:
    void reachable();
    void unreachable(const QString& reason);

private:
    void onReady();
    void tick();
    void alive();

    QPointer<AgentClient> m_client;
    Clock& m_clock;
    ClockTimer* m_timer = nullptr;
    int m_intervalMs = 5000;
    int m_timeoutMs = 15000;
    bool m_disconnectOnTimeout = true;
    bool m_reachable = false;
    qint64 m_lastAliveMs = 0; // monotonic, ms
    qint64 m_lastRttMs = -1;
    qint64 m_lastPingMs = -1000000;
};

} // namespace ty
