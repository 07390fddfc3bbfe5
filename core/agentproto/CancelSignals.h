#pragma once

// The signals a `cancel` may send first (PROTOCOL.md "cancel", revision 6),
// written once for both sides: the agent (no Qt) and the core (a job spec's
// `preemption.signal`, AgentClient). A run that checkpoints on a signal
// (Slurm's `--signal`, a trap in a shell script) names it; SIGKILL follows
// after the grace whatever it is. Names are the POSIX ones with their "SIG"
// prefix; numbers are Linux's (x86_64, arm64: the same for these six).
// Header-only constants and lookups: no state, any thread.

#include <array>
#include <csignal>
#include <optional>
#include <string_view>

namespace ty::agentproto {

struct CancelSignal {
    std::string_view name;
    int number;
};

inline constexpr std::array<CancelSignal, 6> kCancelSignals{{
        {"SIGTERM", SIGTERM},
        {"SIGINT", SIGINT},
        {"SIGUSR1", SIGUSR1},
        {"SIGUSR2", SIGUSR2},
        {"SIGHUP", SIGHUP},
        {"SIGQUIT", SIGQUIT},
}};

// The default: what `cancel` sends without `signal` (and what an agent before
// revision 6 sends whatever the client asks).
inline constexpr std::string_view kDefaultCancelSignal = "SIGTERM";

// The number of a signal of kCancelSignals by its name ("SIGUSR1" -> 10);
// nullopt for any other name (SIGKILL and SIGSTOP included: they cannot be
// trapped, so a grace after them means nothing).
inline std::optional<int> cancelSignalNumber(std::string_view name)
{
    for (const CancelSignal& s : kCancelSignals)
        if (s.name == name)
            return s.number;
    return std::nullopt;
}

} // namespace ty::agentproto
