#pragma once

#include <QStringList>

namespace ty::cli {

// Exit codes of trainyardctl. A followed run's own exit status is passed
// through (128 + N when signal N ended it), so `submit --follow` composes in
// shell scripts like the command itself would.
enum ExitCode {
    Ok = 0,
    RunFailed = 1, // the run failed without an exit status of its own
    Usage = 2,
    InvalidSpec = 3,
    NoSuchRun = 4,
    Unavailable = 5, // database or agent error
};

// Runs one trainyardctl command; `args` includes the program name.
int run(const QStringList& args);

// Routes Qt's log messages to stderr as trainyardctl's own lines: warnings
// as "trainyardctl: MESSAGE", others (shown only when QT_LOGGING_RULES
// enables them) with their category. Control characters in them (a file
// name from a node, a link's text) are escaped as in artifact listings, so
// a message is one line and cannot drive the terminal. Call once, first.
void installMessageHandler();

} // namespace ty::cli
