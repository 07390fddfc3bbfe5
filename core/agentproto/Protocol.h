#pragma once

// The trainyard-agent wire protocol's version numbers, written once for both
// sides: the agent (app/agent, standard C++ only, no Qt) sends them in its
// `hello` message, and the core's AgentClient (core/nodes) checks them.
// Header-only constants: no state, no errors, usable from any thread.
// See app/agent/PROTOCOL.md for the messages themselves.

namespace ty::agentproto {

// The protocol's major version. A client refuses an agent whose `hello`
// carries a different `protocol` value.
inline constexpr int kProtocolVersion = 1;

// Additions within protocol 1 that clients may ignore (PROTOCOL.md "Revisions"):
// 2: `output` carries `stderr` ranges; 3: `truncated` events; 4: Slurm runs
// (`slurm_info`, `start` with `slurm`, `slurm` events); 5: Slurm job arrays
// (`start_array`); 6: `cancel` takes `signal` (CancelSignals.h); 7:
// `listening_ports` (the node's TCP ports in LISTEN, so rendezvous ports avoid them);
// 8: `tail` takes `compress` ("lz4"), `output` payloads may be LZ4 blocks
// (ConsoleCompression.h).
inline constexpr int kProtocolRevision = 8;

} // namespace ty::agentproto
