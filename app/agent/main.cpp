// trainyard-agent: the one process on a node that starts, watches, tails and
// cancels runs. Speaks PROTOCOL.md over stdin/stdout.

#include "Agent.h"
#include "RunRegistry.h"
#include "Supervisor.h"

#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <iostream>
#include <string>

namespace {

void usage(std::ostream& os)
{
    os << "usage: trainyard-agent [--stdio] [--state-dir DIR] [--slurm-poll-ms MS] | --version | --help\n"
          "  --stdio              speak the agent protocol on stdin/stdout (default)\n"
          "  --state-dir DIR      runs live in DIR/runs (default: $TRAINYARD_AGENT_STATE,\n"
          "                       $XDG_STATE_HOME/trainyard-agent, ~/.local/state/trainyard-agent)\n"
          "  --slurm-poll-ms MS   how often Slurm runs' states are asked for (default:\n"
          "                       $TRAINYARD_AGENT_SLURM_POLL_MS, else 5000)\n";
}

} // namespace

int main(int argc, char** argv)
{
    // Console files, runs.env, exit files, stderr ranges, the sync copy: the
    // node user's only (0600/0700) whatever the umask; the runs get back
    // the umask the agent found (Supervisor.h).
    ty::agent::setRunUmask(::umask(077));
    std::string stateDir;
    long long slurmPollMs = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--stdio") {
            continue;
        } else if (a == "--version") {
            std::cout << "trainyard-agent " << ty::agent::kAgentVersion << " (protocol " << ty::agent::kProtocolVersion
                      << ")\n";
            return 0;
        } else if (a == "--help" || a == "-h") {
            usage(std::cout);
            return 0;
        } else if (a == "--state-dir" && i + 1 < argc) {
            stateDir = argv[++i];
        } else if (a.rfind("--state-dir=", 0) == 0) {
            stateDir = a.substr(std::strlen("--state-dir="));
        } else if (a == "--slurm-poll-ms" && i + 1 < argc) {
            slurmPollMs = std::atoll(argv[++i]);
        } else if (a.rfind("--slurm-poll-ms=", 0) == 0) {
            slurmPollMs = std::atoll(a.c_str() + std::strlen("--slurm-poll-ms="));
        } else {
            std::cerr << "trainyard-agent: unknown argument '" << a << "'\n";
            usage(std::cerr);
            return 64;
        }
    }
    ty::agent::AgentOptions options;
    options.stateDir = ty::agent::resolveStateDir(stateDir);
    options.slurmPollMs = slurmPollMs;
    ty::agent::Agent agent(options);
    return agent.run();
}
