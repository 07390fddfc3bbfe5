#pragma once

#include <termios.h>

namespace ty {

// Turns a terminal's echo off for a secret (a key's passphrase) and makes
// sure it comes back: when the guard is destroyed, and also when SIGINT,
// SIGTERM, SIGHUP or SIGQUIT arrive meanwhile (Ctrl+C at the prompt), as
// OpenSSH's readpassphrase does. On such a signal the handler restores the
// terminal, then the signal's previous disposition is put back and the signal
// raised again, so the process does what it would have done without the
// guard (ends, or its own handler runs); a blocking read of the secret then
// fails with EINTR (the handler is installed without SA_RESTART).
//
// One guard at a time per process (the handler is process-wide); any thread.
// `fd` must stay open while the guard lives. A `fd` that is not a terminal:
// nothing is changed (active() is false).
class TerminalEchoGuard final {
public:
    explicit TerminalEchoGuard(int fd);
    ~TerminalEchoGuard();
    TerminalEchoGuard(const TerminalEchoGuard&) = delete;
    TerminalEchoGuard& operator=(const TerminalEchoGuard&) = delete;

    bool active() const { return m_active; }

private:
    int m_fd;
    bool m_active = false;
    termios m_saved{};
};

} // namespace ty
