#include "TerminalEchoGuard.h"

#include <csignal>
#include <cstring>

namespace ty {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kCount = int(sizeof kSignals / sizeof kSignals[0]);

// What the handler needs, set before it is installed (async-signal-safe use only).
volatile std::sig_atomic_t g_active = 0;
int g_fd = -1;
termios g_saved{};
struct sigaction g_previous[kCount];

int slotOf(int sig)
{
    for (int i = 0; i < kCount; ++i)
        if (kSignals[i] == sig)
            return i;
    return -1;
}

extern "C" void restoreTerminalAndRaise(int sig)
{
    if (g_active) {
        ::tcsetattr(g_fd, TCSANOW, &g_saved);
        g_active = 0;
    }
    if (const int i = slotOf(sig); i >= 0)
        ::sigaction(sig, &g_previous[i], nullptr);
    ::raise(sig); // delivered once this handler returns, to the previous disposition
}

} // namespace

TerminalEchoGuard::TerminalEchoGuard(int fd)
    : m_fd(fd)
{
    if (::tcgetattr(fd, &m_saved) != 0)
        return;
    g_fd = fd;
    g_saved = m_saved;
    g_active = 1;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = &restoreTerminalAndRaise;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; // no SA_RESTART: the read of the secret is interrupted
    for (int i = 0; i < kCount; ++i)
        ::sigaction(kSignals[i], &sa, &g_previous[i]);
    termios quiet = m_saved;
    quiet.c_lflag &= ~tcflag_t(ECHO);
    // TCSAFLUSH: what was typed before the question is not taken as the answer.
    ::tcsetattr(fd, TCSAFLUSH, &quiet);
    m_active = true;
}

TerminalEchoGuard::~TerminalEchoGuard()
{
    if (!m_active)
        return;
    ::tcsetattr(m_fd, TCSAFLUSH, &m_saved);
    g_active = 0;
    for (int i = 0; i < kCount; ++i) {
        struct sigaction current;
        // A handler that already ran put the previous disposition back itself.
        if (::sigaction(kSignals[i], nullptr, &current) == 0 && current.sa_handler == &restoreTerminalAndRaise)
            ::sigaction(kSignals[i], &g_previous[i], nullptr);
    }
}

} // namespace ty
