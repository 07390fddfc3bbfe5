#pragma once

#include <QString>

// Per-command help of trainyardctl (`trainyardctl COMMAND --help`,
// `trainyardctl help COMMAND`), from one table in CommandHelp.cpp: usage
// line, what the command does, and each option with its meaning.
namespace ty::cli {

// The help of COMMAND (a top-level command such as "logs", or "node" /
// "daemon" with its subcommands), ending in a newline; empty when COMMAND has
// no entry (the caller then prints the global help).
QString commandHelp(const QString& command);

} // namespace ty::cli
