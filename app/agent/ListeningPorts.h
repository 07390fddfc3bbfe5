#pragma once

// `listening_ports` (PROTOCOL.md, revision 7): the TCP ports something on
// the node listens on, so the scheduler never gives a gang's rendezvous
// (MASTER_PORT, torchrun's c10d store, TF worker ports) a port another
// program holds: another Trainyard database's gang, a user's Jupyter or
// TensorBoard, a torchrun started by hand.
//
// Source: the kernel's socket tables /proc/net/tcp and /proc/net/tcp6
// (proc(5), "/proc/net/tcp"): one socket a line after a header,
// "sl local_address rem_address st ...", local_address as hex
// "ADDR:PORT", st as hex, 0A for TCP_LISTEN (include/net/tcp_states.h).
// The tables show the sockets of the agent's network namespace, whoever
// owns them. Standard C++ only, like the rest of the agent; any thread.

#include <string>
#include <string_view>
#include <vector>

namespace ty::agent {

// The local ports of the sockets in state LISTEN in one /proc/net/tcp or
// /proc/net/tcp6 text, ascending, each once. A line that does not parse
// (the header, a truncated last line) is skipped.
std::vector<int> listeningPortsIn(std::string_view procNetTcp);

// listeningPortsIn over /proc/net/tcp and /proc/net/tcp6, merged. A table
// that cannot be read (no IPv6, no /proc) adds nothing; `error` (when given)
// gets "cannot read PATH: why" for /proc/net/tcp, which every Linux has.
std::vector<int> listeningPorts(std::string* error = nullptr);

} // namespace ty::agent
