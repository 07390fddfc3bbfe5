#pragma once

#include "CliCommon.h"

#include <QString>
#include <QStringList>
#include <QStringView>

#include <span>

namespace ty::cli {

// What a command does with the result database, which decides how it is
// opened before the command runs (Cli.cpp):
//   Reads    opened read-only where the user cannot write it (a colleague's
//            results on a read-only share); no file is made when none exists
//   Changes  opened read-write; refused, naming the command, when read-only
//   Creates  as Changes, and a missing database is made (a first submit,
//            node add, policy)
enum class DatabaseUse { Reads, Changes, Creates };

// One trainyardctl command that works on the result database (validate,
// daemon and help need none and are answered before it is opened).
// `use` may look at the arguments (`node ls` only reads; `node add` creates).
// `run` returns the exit code (Cli.h) and prints to out()/err().
struct Command {
    QStringView name;
    DatabaseUse (*use)(const QStringList& args);
    int (*run)(Context& ctx, const QString& name, const QStringList& args);
};

// The commands, in the order the help lists them. Main thread only.
std::span<const Command> commands();
// The command called `name`; nullptr when there is none.
const Command* findCommand(QStringView name);
// The names of the commands that only read, for messages ("ls, show, ...").
QString readingCommandNames();

} // namespace ty::cli
